package dev.warden.lock.jdbc;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.FencedRegister;
import dev.warden.lock.tck.LockHistory;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the database does to locks beyond the kit: a restart (clean and after a crash) under load, the
 * holder's connections terminated by an operator, and a holder process frozen past its TTL.
 */
@DisplayName("jdbc backend: PostgreSQL restarted, connections terminated, a frozen holder")
class JdbcFaultTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration SLACK = Duration.ofSeconds(5);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    private final String namespace = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @AfterEach
    void closeEverything() throws Exception {
        if (server().isPaused()) {
            server().resume();
        }
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private static PostgresServer server() {
        return postgres.server();
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>(LockTable.settings(server()));
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", TTL);
        s.put("warden.lock.request-timeout", Duration.ofMillis(500));
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(20));
        return s;
    }

    private LockClient client(LockHistory history, String holder) {
        LockClient c = LockClient.create(settings(), history.observer(holder));
        closeAfter.add(c);
        return c;
    }

    @Test
    @DisplayName("restarted twice under load (a clean shutdown, then a crash): one holder at a time, tokens in grant order, grants resume")
    void restartUnderLoad() throws Exception {
        LockHistory history = new LockHistory();
        FencedRegister register = new FencedRegister();
        List<LockClient> clients = List.of(client(history, "a"), client(history, "b"));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong grants = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        closeAfter.add(pool::shutdownNow);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            DistributedLock lock = clients.get(t % 2).lock("job");
            work.add(pool.submit(() -> {
                while (!stop.get()) {
                    try {
                        Optional<Lease> got = lock.tryAcquire(Duration.ofSeconds(30));
                        if (got.isPresent()) {
                            try (Lease lease = got.get()) {
                                if (lease.isValid() && !register.write(lease.fencingToken(), grants.incrementAndGet())) {
                                    refused.incrementAndGet();
                                }
                            }
                        }
                    } catch (LockException e) {
                        // a release or an acquisition that met the restart: the lease is told, the loop goes on
                    }
                }
                return null;
            }));
        }
        try {
            Await.until(SLACK, "grants before the restart", () -> grants.get() > 50);
            server().restart();
            long afterRestart = grants.get();
            Await.until(Duration.ofSeconds(30), "grants after the restart", () -> grants.get() > afterRestart + 50);
            server().kill();
            server().restart();
            long afterCrash = grants.get();
            Await.until(Duration.ofSeconds(30), "grants after the crash", () -> grants.get() > afterCrash + 50);
        } finally {
            stop.set(true);
        }
        for (Future<?> f : work) {
            f.get(1, TimeUnit.MINUTES);
        }
        System.out.printf("restart under load: %d grants, %d losses, %d fenced writes refused%n", history.grants(),
                history.count(LockHistory.Kind.LOST), refused.get());
        assertThat(history.violations()).isEmpty();
        assertThat(refused.get()).as("fenced writes refused: a valid lease's token was below an earlier one's").isZero();
    }

    @Test
    @DisplayName("the holder's connections terminated (pg_terminate_backend): it keeps the lock and renews on new ones; a waiter gets it at the release")
    void terminatedConnections() throws Exception {
        LockHistory history = new LockHistory();
        LockClient holderClient = client(history, "holder");
        LockClient waiterClient = client(history, "waiter");
        Lease held = holderClient.lock("job").acquire();
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        held.onLost(lost::set);
        CompletableFuture<Lease> waiting = waiterClient.lock("job").acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
        String terminated = server().psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                + " WHERE application_name = 'warden-lock'");
        assertThat(Integer.parseInt(terminated)).as("connections terminated").isGreaterThanOrEqualTo(3);
        long renewalsBefore = history.count(LockHistory.Kind.RENEW);
        Await.until(TTL.multipliedBy(2).plus(SLACK), "the holder renews on new connections",
                () -> history.count(LockHistory.Kind.RENEW) >= renewalsBefore + 3);
        assertThat(held.isValid()).isTrue();
        assertThat(lost.get()).as("the holder's loss").isNull();
        assertThat(waiting).as("the waiter, while the holder holds").isNotDone();
        long token = held.fencingToken();
        held.release();
        Lease next = waiting.get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(token);
        next.release();
        assertThat(history.violations()).isEmpty();
    }

    @Test
    @DisplayName("a holder process frozen (SIGSTOP) past its TTL: the next holder's token is higher; resumed, it is told LOST and its fenced write is refused")
    void frozenHolder() throws Exception {
        Map<String, Object> s = settings();
        HolderProcess.Child frozen = HolderProcess.start("job", s, close -> closeAfter.add(close::run));
        FencedRegister register = new FencedRegister();
        assertThat(register.write(frozen.token(), 1)).isTrue();
        LockClient other = client(new LockHistory(), "other");
        frozen.signal("STOP");
        Lease next;
        try {
            next = other.lock("job").tryAcquire(TTL.plus(SLACK)).orElseThrow(() -> new AssertionError("no grant after the frozen holder's TTL"));
            assertThat(next.fencingToken()).isGreaterThan(frozen.token());
            assertThat(register.write(next.fencingToken(), 2)).isTrue();
        } finally {
            frozen.signal("CONT");
        }
        assertThat(frozen.nextLine(TTL.plus(SLACK))).as("what the resumed holder's lease says").startsWith("LOST ");
        assertThat(register.write(frozen.token(), 3)).isFalse();
        assertThat(next.isValid()).isTrue();
        next.release();
    }
}
