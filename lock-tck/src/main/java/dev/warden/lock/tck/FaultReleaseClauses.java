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

/**
 * Release under faults: a lease lost behind its back, or cut off, never removes the next holder's lock.
 */
abstract class FaultReleaseClauses {

    private final LockFaultContractTest kit;

    FaultReleaseClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("of a lease removed behind its back does not remove the new holder's lock, and is reported")
    void afterLossLeavesNewHolder() {
        String name = kit.newName();
        Lease old = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(old);
        kit.removeBehindHoldersBack(kit.namespace(), name);
        Await.until(kit.renewInterval().plus(kit.slack()), "the old lease is marked lost", () -> lost.get() != null);
        Lease next = kit.client().lock(name).acquire();
        assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
        assertThat(kit.onServer(name)).isTrue();
        assertThat(next.isValid()).isTrue();
        assertThat(kit.client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    @DisplayName("of a lease lost on the server but not yet noticed compares before it deletes")
    void unnoticedLossComparesOnServer() {
        String name = kit.newName();
        // A long TTL keeps the old holder's next renewal far away: its release reaches the server.
        LockClient oldClient = kit.client("ttl", kit.ttl().multipliedBy(10));
        Lease old = oldClient.lock(name).acquire();
        kit.removeBehindHoldersBack(kit.namespace(), name);
        Lease next = kit.client().lock(name).tryAcquire(kit.slack()).orElseThrow();
        assertThat(old.isValid()).as("the loss is not noticed yet").isTrue();
        if (kit.keptFor().isZero() || kit.keptReleaseAsksServer()) {
            // A client that keeps leases but reserves its tokens at the first release learns of the loss there,
            // reserves nothing for a grant that is gone, and keeps nothing of it.
            assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
            assertThat(oldClient.lock(name).tryAcquire(Duration.ZERO)).as("the old client while another holds").isEmpty();
        } else {
            // A client that keeps leases and reserved its tokens with the grant (Redis) does not ask the server at
            // release: the kept hold is let go of later, by compare-and-delete, and the lease reads released.
            assertThat(old.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }
        assertThat(kit.onServer(name)).isTrue();
        assertThat(kit.client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    @DisplayName("by another client's stale lease never touches the current holder")
    void onlyTheOwnerReleases() {
        String name = kit.newName();
        LockClient a = kit.client();
        LockFaultContractTest.Proxied b = kit.clientBehindProxy();
        Lease stale = b.client().lock(name).acquire();
        b.proxy().blackhole();
        Await.until(kit.ttl().plus(kit.slack()), "the cut-off lease turns invalid", () -> !stale.isValid());
        try (Lease current = a.lock(name).tryAcquire(kit.ttl().plus(kit.slack())).orElseThrow()) {
            b.proxy().restore();
            assertThat(stale.release()).isEqualTo(ReleaseOutcome.LOST);
            assertThat(kit.onServer(name)).isTrue();
            assertThat(current.isValid()).isTrue();
        }
    }
}
