package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Waiting gives up cleanly: a timed-out, interrupted or cancelled acquisition leaves nothing held
 * or queued on the backend.
 */
abstract class GivingUpClauses {

    private final LockKit kit;

    GivingUpClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a timed acquire returns empty near its deadline")
    void timedAcquireReturnsNearDeadline() {
        String name = kit.newName();
        try (Lease held = kit.client().lock(name).acquire()) {
            Duration wait = Duration.ofMillis(400);
            long t0 = System.nanoTime();
            Optional<Lease> none = kit.client().lock(name).tryAcquire(wait);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(none).isEmpty();
            assertThat(took).isGreaterThanOrEqualTo(wait).isLessThan(wait.plus(kit.slack()));
            assertThat(kit.client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("a timed-out acquire leaves nothing on the server")
    void timedOutLeavesNothing() {
        LockClient waiter = kit.client();
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        assertThat(waiter.lock(name).tryAcquire(Duration.ofMillis(200))).isEmpty();
        held.release();
        assertThat(kit.freed(name)).as("state left on the server").isTrue();
        Await.during(kit.renewInterval(), "nothing appears on the server", () -> !kit.onServer(name));
        assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("an interrupted acquire restores the interrupt flag and leaves nothing on the server")
    void interruptedLeavesNothing() throws Exception {
        LockClient waiter = kit.client();
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        CompletableFuture<Boolean> flag = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                waiter.lock(name).acquire();
                thrown.complete(null);
            } catch (Throwable e) {
                flag.complete(Thread.currentThread().isInterrupted());
                thrown.complete(e);
            }
        });
        t.start();
        Await.until(kit.slack(), "the waiter is blocked", () -> t.getState() == Thread.State.WAITING
                || t.getState() == Thread.State.TIMED_WAITING);
        t.interrupt();
        assertThat(thrown.get(10, TimeUnit.SECONDS)).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.INTERRUPTED);
        assertThat(flag.get()).as("interrupt flag restored").isTrue();
        held.release();
        assertThat(kit.freed(name)).as("state left on the server").isTrue();
        Await.during(kit.renewInterval(), "nothing appears on the server", () -> !kit.onServer(name));
        assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("a cancelled async acquire leaves nothing on the server")
    void cancelledAsyncLeavesNothing() throws Exception {
        LockClient waiter = kit.client();
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync();
        Await.during(Duration.ofMillis(100), "still waiting", () -> !waiting.isDone());
        assertThat(waiting.cancel(true)).isTrue();
        held.release();
        // cancel() cannot block: a queue entry (etcd, ZooKeeper) is removed right after it.
        Await.until(kit.slack(), "the abandoned attempt leaves the server", () -> !kit.onServer(name));
        Await.during(kit.renewInterval(), "nothing appears on the server", () -> !kit.onServer(name));
        assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("an async acquire cancelled as it is granted releases the grant")
    void cancelRacingGrantReleases() {
        LockClient c = kit.client();
        String name = kit.newName();
        for (int i = 0; i < 20; i++) {
            CompletableFuture<Lease> f = c.lock(name).acquireAsync();
            if (!f.cancel(true)) {
                // Too late to cancel: the caller holds a lease and must release it.
                f.join().release();
            }
        }
        Await.until(kit.slack(), "every raced grant is released", () -> !kit.onServer(name));
        assertThat(kit.client().lock(name).tryAcquire(kit.slack())).isPresent();
    }

    @Test
    @DisplayName("an async acquire whose future the caller times out leaves nothing behind")
    void callerTimeoutLeavesNothing() throws Exception {
        LockClient waiter = kit.client();
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync().orTimeout(200, TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(java.util.concurrent.TimeoutException.class);
        held.release();
        Await.until(kit.slack(), "the abandoned attempt leaves the server", () -> !kit.onServer(name));
        Await.during(kit.renewInterval(), "nothing appears on the server", () -> !kit.onServer(name));
        assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("async continuations run on Warden's threads and may block, even to release")
    void continuationsMayBlock() throws Exception {
        String name = kit.newName();
        String thread = kit.client().lock(name).acquireAsync().thenApply(lease -> {
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            return Thread.currentThread().getName();
        }).get(10, TimeUnit.SECONDS);
        // An already complete future runs the continuation on the caller; otherwise Warden's
        // callback threads do, never a driver's I/O thread that the release needs.
        assertThat(thread).satisfiesAnyOf(t -> assertThat(t).isEqualTo(Thread.currentThread().getName()),
                t -> assertThat(t).startsWith("warden-").contains("-callbacks-"));
        assertThat(kit.freed(name)).isTrue();
        Lease again = kit.client().lock(name).acquire();
        assertThat(again.releaseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(again.releaseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS))
                .isEqualTo(ReleaseOutcome.ALREADY_RELEASED);
    }

    @Test
    @DisplayName("a failed async acquire's continuations run on Warden's threads too, and may block")
    void failedContinuationsMayBlock() throws Exception {
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        String thread = kit.client().lock(name).acquireAsync(Duration.ofMillis(100)).handle((lease, error) -> {
            if (error == null) {
                throw new AssertionError("granted token " + lease.fencingToken() + " while another lease held the lock");
            }
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
            return Thread.currentThread().getName();
        }).get(10, TimeUnit.SECONDS);
        // Whichever thread ended the acquisition (a timer, a driver's answer), the continuation is handed on.
        assertThat(thread).satisfiesAnyOf(t -> assertThat(t).isEqualTo(Thread.currentThread().getName()),
                t -> assertThat(t).startsWith("warden-").contains("-callbacks-"));
        assertThat(kit.freed(name)).isTrue();
    }

    @Test
    @DisplayName("an async acquire with a wait fails with TIMEOUT when it runs out")
    void asyncTimeout() {
        String name = kit.newName();
        try (Lease held = kit.client().lock(name).acquire()) {
            CompletableFuture<Lease> waiting = kit.client().lock(name).acquireAsync(Duration.ofMillis(200));
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.TIMEOUT);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("an async acquire completes with a lease once the holder releases")
    void asyncCompletesOnRelease() throws Exception {
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        CompletableFuture<Lease> waiting = kit.client().lock(name).acquireAsync();
        // On failure, say how the waiter ended: a grant while held, or an error (which one).
        Await.during(Duration.ofMillis(100), "still waiting", () -> !waiting.isDone(), () -> waiting.handle(
                (lease, error) -> error != null ? "it failed: " + error : "it was granted token " + lease.fencingToken())
                .getNow("it had not ended"));
        held.release();
        try (Lease next = waiting.get(10, TimeUnit.SECONDS)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(next.isValid()).isTrue();
        }
    }
}
