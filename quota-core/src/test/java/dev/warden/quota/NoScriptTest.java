package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.internal.Scripts;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** NOSCRIPT is recovered transparently (EVAL of the source): after SCRIPT FLUSH, and after a restart in the middle of a load. */
class NoScriptTest {

    /** Every acknowledged write is fsynced, so a restart loses the script cache but not the data. */
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(RedisServer.builder().appendOnly(true).appendFsyncAlways());

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.request-timeout", "2s")));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    static boolean loaded(Scripts.Script script) {
        return List.of(1L).equals(redis.server().command("SCRIPT", "EXISTS", Scripts.digest(script)));
    }

    @Test
    @DisplayName("after SCRIPT FLUSH every form reloads its script and answers")
    void afterScriptFlush() throws Exception {
        String account = "m-" + UUID.randomUUID();
        assertThat(quota.open(account, 1_000)).isInstanceOf(Outcome.Applied.class);

        redis.server().command("SCRIPT", "FLUSH");
        assertThat(quota.deduct(account, 1, UUID.randomUUID().toString())).isInstanceOf(Outcome.Applied.class);
        assertThat(loaded(Scripts.Script.DEDUCT)).isTrue();

        redis.server().command("SCRIPT", "FLUSH");
        assertThat(quota.deductAsync(account, 1, UUID.randomUUID().toString()).toCompletableFuture().get(10, TimeUnit.SECONDS))
                .isInstanceOf(Outcome.Applied.class);
        redis.server().command("SCRIPT", "FLUSH");
        assertThat(quota.deductAll(List.of(new Deduction(account, 1, UUID.randomUUID().toString()),
                new Deduction(account, 1, UUID.randomUUID().toString())))).allMatch(o -> o instanceof Outcome.Applied);
        redis.server().command("SCRIPT", "FLUSH");
        assertThat(quota.topUp(account, 4, UUID.randomUUID().toString())).isInstanceOf(Outcome.Applied.class);
        assertThat(quota.balance(account)).hasValue(1_000);
        assertThat(quota.open("m-" + UUID.randomUUID(), 1)).isInstanceOf(Outcome.Applied.class);
        assertThat(loaded(Scripts.Script.CREDIT)).isTrue();
        assertThat(loaded(Scripts.Script.BALANCE)).isTrue();
        assertThat(loaded(Scripts.Script.OPEN)).isTrue();
    }

    @Test
    @DisplayName("a storm of SCRIPT FLUSH fails no call: each missing script is run from source until the call's deadline")
    void flushStorm() throws Exception {
        String account = "storm-" + UUID.randomUUID();
        quota.open(account, 10_000);
        java.util.concurrent.atomic.AtomicBoolean storming = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread flusher = new Thread(() -> {
            while (storming.get()) {
                redis.server().command("SCRIPT", "FLUSH");
            }
        });
        flusher.start();
        try {
            for (int i = 0; i < 200; i++) {
                assertThat(quota.deduct(account, 1, "storm-" + i)).as("deduction %d", i).isInstanceOf(Outcome.Applied.class);
            }
        } finally {
            storming.set(false);
            flusher.join();
        }
        assertThat(quota.balance(account)).hasValue(9_800);
    }

    @Test
    @DisplayName("a restart in the middle of a load: callers retry with the same request id, every change applies once")
    void restartUnderLoad() throws Exception {
        String account = "m-" + UUID.randomUUID();
        long initial = 1_000_000;
        quota.open(account, initial);
        int threads = 8;
        int perThread = 150;
        AtomicLong applied = new AtomicLong();
        AtomicInteger unavailable = new AtomicInteger();
        AtomicInteger afterRestart = new AtomicInteger();
        Set<String> requests = ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean restarted = new java.util.concurrent.atomic.AtomicBoolean();

        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Long>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    long sum = 0;
                    for (int i = 0; i < perThread; i++) {
                        String request = "t" + thread + "-" + i + "-" + UUID.randomUUID();
                        long amount = 1 + i % 7;
                        requests.add(request);
                        Outcome outcome = Await.retryWhileUnavailable(Duration.ofSeconds(30), () -> {
                            try {
                                return quota.deduct(account, amount, request);
                            } catch (QuotaException e) {
                                if (e.reason() == QuotaException.Reason.UNAVAILABLE) {
                                    unavailable.incrementAndGet();
                                }
                                throw e;
                            }
                        });
                        assertThat(outcome.isApplied()).as(outcome.toString()).isTrue();
                        sum += amount;
                        applied.incrementAndGet();
                        if (restarted.get()) {
                            afterRestart.incrementAndGet();
                        }
                    }
                    return sum;
                }));
            }
            Await.until(Duration.ofSeconds(60), "some deductions before the restart", () -> applied.get() >= 200);
            redis.server().restart();
            restarted.set(true);
            long sum = 0;
            for (Future<Long> f : futures) {
                sum += f.get(120, TimeUnit.SECONDS);
            }

            assertThat(afterRestart.get()).as("deductions ran after the restart").isPositive();
            Map<?, ?> stats = commandStats();
            assertThat(stats.get("cmdstat_eval")).as("the script ran from its source (EVAL) after the restart").isNotNull();
            assertThat(quota.balance(account)).hasValue(initial - sum);
            List<Journal.Entry> journal = Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                    .filter(e -> e.account().equals(account) && e.kind().equals("deduct")).toList();
            assertThat(journal).hasSize(threads * perThread);
            assertThat(journal.stream().map(Journal.Entry::request).collect(Collectors.toSet())).isEqualTo(requests);
            assertThat(journal.stream().mapToLong(Journal.Entry::amount).sum()).isEqualTo(sum);
            System.out.printf("restart under load: %d deductions, %d UNAVAILABLE replies retried, %d after the restart%n",
                    applied.get(), unavailable.get(), afterRestart.get());
        } finally {
            pool.shutdownNow();
        }
    }

    /** INFO commandstats, which a restart resets: a SCRIPT LOAD there came after the restart. */
    private static Map<String, String> commandStats() {
        String info = (String) redis.server().command("INFO", "commandstats");
        return info.lines().filter(l -> l.startsWith("cmdstat_"))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1)));
    }
}
