package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** Release is idempotent, and a lost lease's release never touches the next holder's lock. */
abstract class ReleaseClauses {

    private final LockKit kit;

    ReleaseClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("is idempotent")
    void idempotent() {
        String name = kit.newName();
        Lease lease = kit.client().lock(name).acquire();
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.ALREADY_RELEASED);
        lease.close();
        assertThat(lease.isValid()).isFalse();
        assertThat(kit.freed(name)).isTrue();
    }

    @Test
    @DisplayName("of a lease already lost reports LOST and leaves the next holder's lock alone")
    void afterLossLeavesNextHolder() {
        String name = kit.newName();
        LockClient holder = kit.client();
        Lease old = holder.lock(name).withMaxHoldTime(Duration.ofMillis(200)).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(old);
        Await.until(kit.slack(), "the old lease is lost at its maximum hold time", () -> lost.get() != null);
        Lease next = kit.client().lock(name).tryAcquire(kit.slack()).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
        assertThat(kit.onServer(name)).isTrue();
        assertThat(next.isValid()).isTrue();
        assertThat(kit.client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }
}
