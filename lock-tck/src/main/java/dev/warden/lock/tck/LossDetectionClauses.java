package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LostReason;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease lost to a fault turns invalid and tells its listener: a paused server, a holder cut off,
 * a lock removed behind its holder's back.
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
        try {
            Await.until(kit.ttl().plus(kit.renewInterval()), "the listener fires within one renewal interval of the TTL",
                    () -> lost.get() != null);
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
        Await.until(kit.ttl().plus(kit.renewInterval()), "the cut-off holder's listener fires", () -> lost.get() != null);
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
    @DisplayName("when the lock is removed behind the holder's back, within one renewal interval")
    void removedBehindBack() {
        String name = kit.newName();
        Lease lease = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        kit.removeBehindHoldersBack(kit.namespace(), name);
        Await.until(kit.renewInterval().plus(Duration.ofMillis(250)), "the listener fires", () -> lost.get() != null);
        assertThat(lease.isValid()).isFalse();
        assertThat(lost.get().reason()).isEqualTo(LostReason.NOT_OWNER);
    }
}
