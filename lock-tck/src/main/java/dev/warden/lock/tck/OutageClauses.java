package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An unreachable server: every backend gives one answer. A waiter rides out an outage shorter than
 * its wait and gets the lock; it fails with {@code UNAVAILABLE}, never a lease and never a
 * {@code TIMEOUT}, only when its wait or the outage tolerance runs out.
 */
abstract class OutageClauses {

    private static final Duration OUTAGE = Duration.ofSeconds(1);

    private final LockFaultContractTest kit;

    OutageClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("with nothing listening, a client fails UNAVAILABLE within a bounded time, never a lease")
    void nothingListening() {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> {
            Map<String, Object> s = new LinkedHashMap<>(kit.settings());
            s.put("warden.lock.endpoints", kit.unreachableEndpoints());
            try (LockClient c = kit.client(s, LockObserver.NONE, "connect-timeout", "1s")) {
                c.lock(kit.newName()).tryAcquire(Duration.ofSeconds(1));
            }
        }).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2).plus(kit.slack()));
    }

    @Test
    @DisplayName("a timed acquire through a pause longer than its wait fails UNAVAILABLE at its wait, not TIMEOUT")
    void pauseLongerThanTheWait() {
        LockClient c = kit.client();
        String name = kit.newName();
        Duration wait = Duration.ofSeconds(1);
        kit.pauseServer();
        long t0 = System.nanoTime();
        try {
            assertThatThrownBy(() -> c.lock(name).tryAcquire(wait))
                    .isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(wait)
                    .isLessThan(wait.plus(kit.slack()));
        } finally {
            kit.resumeServer();
        }
        assertThat(kit.client().lock(name).tryAcquire(kit.ttl().plus(kit.slack()))).isPresent();
    }

    @Test
    @DisplayName("a blocking acquire fails UNAVAILABLE once an outage outlasts warden.lock.outage-tolerance")
    void toleranceRunsOut() {
        Duration tolerance = Duration.ofMillis(800);
        LockClient c = kit.client("outage-tolerance", tolerance);
        String name = kit.newName();
        kit.pauseServer();
        long t0 = System.nanoTime();
        try {
            assertThatThrownBy(() -> c.lock(name).acquire())
                    .isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            // The outage counts from the first failed call, which a paused server fails at the request timeout.
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(tolerance)
                    .isLessThan(tolerance.plus(Duration.ofSeconds(1)).plus(kit.slack()));
        } finally {
            kit.resumeServer();
        }
    }

    @Test
    @DisplayName("a blocking and a timed waiter ride out a ~1 s server pause and get the lock afterwards")
    void rideOutServerPause() throws Exception {
        rideOut(kit::pauseServer, kit::resumeServer, kit.client(), kit.client());
    }

    @Test
    @DisplayName("a blocking and a timed waiter ride out ~1 s with their connections cut and get the lock afterwards")
    void rideOutConnectionCut() throws Exception {
        LockFaultContractTest.Proxied a = kit.clientBehindProxy();
        LockFaultContractTest.Proxied b = kit.clientBehindProxy();
        rideOut(() -> {
            a.proxy().blackhole();
            b.proxy().blackhole();
        }, () -> {
            // Restoring drops the connections held through the cut: clients reconnect, as after a restart.
            a.proxy().restore();
            b.proxy().restore();
        }, a.client(), b.client());
    }

    /** Two waiters queue behind a holder; the outage comes and goes; both get the lock, in turn. */
    private void rideOut(Runnable cut, Runnable heal, LockClient blockingClient, LockClient timedClient) throws Exception {
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        Duration wait = OUTAGE.plus(kit.ttl()).plus(kit.slack()).multipliedBy(2);
        ExecutorService pool = kit.threads(2);
        Future<Long> blocking = pool.submit(() -> {
            try (Lease lease = blockingClient.lock(name).acquire()) {
                return lease.fencingToken();
            }
        });
        Future<Optional<Long>> timed = pool.submit(() -> timedClient.lock(name).tryAcquire(wait).map(lease -> {
            lease.release();
            return lease.fencingToken();
        }));
        Await.during(Duration.ofMillis(200), "both wait for the holder", () -> !blocking.isDone() && !timed.isDone());
        cut.run();
        try {
            Await.during(OUTAGE, "neither waiter gives up during the outage", () -> !blocking.isDone() && !timed.isDone());
        } finally {
            heal.run();
        }
        try {
            held.release();
        } catch (LockException e) {
            // Not confirmed after the outage: the lock then expires within its TTL, which the waits allow for.
            assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        }
        long first = blocking.get(wait.plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        Optional<Long> second = timed.get(wait.plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(second).as("the timed waiter got the lock within its wait").isPresent();
        assertThat(first).isGreaterThan(held.fencingToken()).isNotEqualTo(second.get());
        assertThat(second.get()).isGreaterThan(held.fencingToken());
    }
}
