package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease keeper renews while the holder works, never after release, and leaves no thread behind.
 */
abstract class KeeperClauses {

    private final LockKit kit;

    KeeperClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("keeps a lock held for 3x its TTL while the holder works")
    void keepsLockAlive() {
        String name = kit.newName();
        LockClient other = kit.client();
        try (Lease lease = kit.client().lock(name).acquire()) {
            AtomicReference<LeaseLost> lost = LockKit.watch(lease);
            Await.during(kit.ttl().multipliedBy(3).plus(kit.renewInterval()), "the lease stays valid and held",
                    () -> lease.isValid() && kit.onServer(name) && lost.get() == null);
            assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(kit.ttl());
            assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        }
        assertThat(kit.freed(name)).isTrue();
    }

    @Test
    @DisplayName("never renews after release: the lock stays gone and the lease is never reported lost")
    void noRenewalAfterRelease() {
        String name = kit.newName();
        LockHistory history = new LockHistory();
        Lease lease = kit.observedClient(history.observer("holder")).lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        Await.until(kit.renewInterval().multipliedBy(2).plus(kit.slack()), "a renewal is confirmed",
                () -> history.count(LockHistory.Kind.RENEW) >= 2);
        lease.release();
        assertThat(kit.freed(name)).as("let go of on the server").isTrue();
        Await.during(kit.ttl().plus(kit.renewInterval()), "nothing renews the released lock",
                () -> !kit.onServer(name) && lost.get() == null && !lease.isValid());
        assertThat(history.violations()).as("renewals after release").isEmpty();
    }

    @Test
    @DisplayName("leaves no thread behind once its client is closed")
    void noThreadOutlivesClient() {
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        LockClient c = LockClient.create(kit.withNamespace());
        try (Lease lease = c.lock(kit.newName()).acquire()) {
            Await.during(kit.renewInterval().multipliedBy(2), "renewing", lease::isValid);
        }
        c.close();
        Await.until(kit.slack(), "threads the client started have ended", () -> newThreads(before).isEmpty());
    }

    private Set<String> newThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t) && t.isAlive())
                .filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool"))
                .map(Thread::getName)
                .collect(Collectors.toSet());
    }
}
