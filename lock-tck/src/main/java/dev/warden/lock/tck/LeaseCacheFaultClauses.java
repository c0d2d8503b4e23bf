package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Leases kept, with the server cut off: a kept lock is taken again without any round trip. */
abstract class LeaseCacheFaultClauses {

    private final LockFaultContractTest kit;

    LeaseCacheFaultClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a released lock is taken again with the server unreachable, with a higher token")
    void takenAgainWithoutServer() {
        String name = kit.newName();
        LockFaultContractTest.Proxied p = kit.clientBehindProxy();
        Lease first = p.client().lock(name).acquire();
        assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(kit.onServer(name)).as("kept on the server").isTrue();
        p.proxy().blackhole();
        Lease again = p.client().lock(name).tryAcquire(Duration.ZERO)
                .orElseThrow(() -> new AssertionError("the kept lock was not taken again without the server"));
        assertThat(again.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(again.isValid()).isTrue();
        assertThat(again.release()).isEqualTo(ReleaseOutcome.RELEASED);
        p.proxy().restore();
        assertThat(kit.freed(name)).as("let go of once kept long enough").isTrue();
    }
}
