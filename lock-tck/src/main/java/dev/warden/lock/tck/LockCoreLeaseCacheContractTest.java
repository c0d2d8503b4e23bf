package dev.warden.lock.tck;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kit's mode with leases kept ({@code warden.lock.lease-cache}) for a backend with no server to pause or
 * cut off (the in-memory backend): every core clause, run by clients that keep what they release for
 * {@link #keptFor()}, and group 20 without its clause on a server cut off. A backend with a server runs
 * {@link LockLeaseCacheContractTest}, which adds the fault clauses.
 */
public abstract class LockCoreLeaseCacheContractTest extends LockContractTest {

    @BeforeEach
    void keepsLeases() {
        assertThat(keptFor()).as("keptFor(): the mode's clients keep released leases (warden.lock.lease-cache)").isPositive();
        assertThat(settings()).as("the mode's settings keep released leases").containsKey("warden.lock.lease-cache");
    }

    @Nested
    @DisplayName("20. leases kept after release")
    class LeasesKept extends LeaseCacheClauses {
        LeasesKept() {
            super(LockCoreLeaseCacheContractTest.this);
        }
    }
}
