package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LostReason;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease lost to a fault turns invalid and tells its listener: a paused server, a holder cut off,
 * a lock removed behind its holder's back.
 *
 * <p>After a pause or a cut the lease's deadline is at most a TTL away: its last confirmation was sent
 * before the fault. The clauses assert that deadline exactly, from the loss's {@code lastValidAt}; the
 * listener, told by the keeper's timer on the event thread, gets the kit's slack for scheduling delay.
 */
abstract class LossDetectionClauses {

    private final LockFaultContractTest kit;

    LossDetectionClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("when the server is paused past the TTL")
    void serverPaused() {
        String name = kit.newName();
        Lease lease = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        kit.pauseServer();
        Instant pausedAt = Instant.now();
        try {
            Await.until(kit.ttl().plus(kit.slack()), "the listener fires at the lease's deadline", () -> lost.get() != null);
            assertThat(lost.get().lastValidAt()).as("valid no longer than a TTL after the pause")
                    .isBeforeOrEqualTo(pausedAt.plus(kit.ttl()));
            assertThat(lease.isValid()).isFalse();
            assertThat(lost.get().reason()).isIn(kit.lossReasonsWhenServerPaused());
            assertThat(lost.get().fencingToken()).isEqualTo(lease.fencingToken());
        } finally {
            kit.resumeServer();
        }
    }

    @Test
    @DisplayName("when the holder is cut off past the TTL; the next holder's token is higher and the old fenced write is rejected")
    void holderCutOff() {
        String name = kit.newName();
        LockHistory history = new LockHistory();
        LockFaultContractTest.Proxied cutOff = kit.clientBehindProxy(history.observer("cut-off"));
        LockClient other = kit.observedClient(history.observer("other"));
        FencedRegister register = new FencedRegister();
        Lease old = cutOff.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(old);
        assertThat(register.write(old.fencingToken(), 1)).isTrue();
        cutOff.proxy().blackhole();
        Instant cutAt = Instant.now();
        Await.until(kit.ttl().plus(kit.slack()), "the cut-off holder's listener fires", () -> lost.get() != null);
        assertThat(lost.get().lastValidAt()).as("valid no longer than a TTL after the cut").isBeforeOrEqualTo(cutAt.plus(kit.ttl()));
        assertThat(old.isValid()).isFalse();
        Lease next = other.lock(name).tryAcquire(kit.ttl().plus(kit.slack())).orElseThrow(
                () -> new AssertionError("no other client was granted the lock after the cut-off holder's TTL"));
        assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        assertThat(register.write(next.fencingToken(), 2)).isTrue();
        assertThat(register.write(old.fencingToken(), 3)).as("the cut-off holder's fenced write").isFalse();
        assertThat(register.value()).isEqualTo(2);
        next.release();
        assertThat(history.count(LockHistory.Kind.LOST)).isEqualTo(1);
        assertThat(history.violations()).isEmpty();
    }

    @Test
    @DisplayName("when the lock is removed behind the holder's back, at the next renewal, before the lease's deadline")
    void removedBehindBack() {
        String name = kit.newName();
        Lease lease = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        kit.removeBehindHoldersBack(kit.namespace(), name);
        // The next renewal, at most a renewal interval away, finds the lock gone; its round trips and the
        // timer's scheduling take the slack. NOT_OWNER (not EXPIRED) says it was found before the deadline.
        Await.until(kit.renewInterval().plus(kit.slack()), "the listener fires", () -> lost.get() != null);
        assertThat(lease.isValid()).isFalse();
        assertThat(lost.get().reason()).isEqualTo(LostReason.NOT_OWNER);
    }
}
