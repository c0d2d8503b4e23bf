package dev.warden.lock.tck;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kit's mode with leases kept ({@code warden.lock.lease-cache}), for a backend whose driver can keep
 * them ({@link dev.warden.lock.spi.LeaseCachingDriver}): every core and fault clause, run by clients that
 * keep what they release for {@link #keptFor()} (the clauses wait that long for what a release frees), and
 * group 20, what keeping does. A backend with no server to cut off runs {@link LockCoreLeaseCacheContractTest}.
 */
public abstract class LockLeaseCacheContractTest extends LockFaultContractTest {

    @BeforeEach
    void keepsLeases() {
        assertThat(keptFor()).as("keptFor(): the mode's clients keep released leases (warden.lock.lease-cache)").isPositive();
        assertThat(settings()).as("the mode's settings keep released leases").containsKey("warden.lock.lease-cache");
    }

    @Nested
    @DisplayName("20. leases kept after release")
    class LeasesKept extends LeaseCacheClauses {
        LeasesKept() {
            super(LockLeaseCacheContractTest.this);
        }
    }

    @Nested
    @DisplayName("20. leases kept after release, the server cut off")
    class LeasesKeptServerCutOff extends LeaseCacheFaultClauses {
        LeasesKeptServerCutOff() {
            super(LockLeaseCacheContractTest.this);
        }
    }
}
