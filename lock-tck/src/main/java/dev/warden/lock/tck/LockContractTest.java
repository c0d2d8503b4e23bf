package dev.warden.lock.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The core lock contract: what every backend passes, the in-memory one included. A backend's test
 * extends this class and says only how to reach the backend and how to read its state directly
 * ({@link #settings()}, {@link #hasServerState}). Backends with a server extend
 * {@link LockProcessFaultContractTest} instead (and {@link LockFaultContractTest} in their further
 * transports and topologies), which add the clauses that need fault controls.
 *
 * <p>Each group is a nested class whose clauses live in their own file, so a failure reads as a
 * sentence: "Redis backend > 4. waiting gives up cleanly > a timed acquire returns empty near its
 * deadline".
 */
public abstract class LockContractTest extends LockKit {

    @Nested
    @DisplayName("1. mutual exclusion")
    class MutualExclusion extends MutualExclusionClauses {
        MutualExclusion() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("2. fencing tokens")
    class FencingTokens extends FencingClauses {
        FencingTokens() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("3. reentrancy")
    class Reentrancy extends ReentrancyClauses {
        Reentrancy() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("4. waiting gives up cleanly")
    class GivingUp extends GivingUpClauses {
        GivingUp() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("5. release")
    class Release extends ReleaseClauses {
        Release() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("6. the lease keeper")
    class Keeper extends KeeperClauses {
        Keeper() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("7. a lease's end: maximum hold time, isValid(), the Lock view")
    class LeaseEnd extends LeaseEndClauses {
        LeaseEnd() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("8. client lifecycle and bad input")
    class Lifecycle extends LifecycleClauses {
        Lifecycle() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("17. an operator's view: holders and forced releases")
    class ForcedRelease extends ForcedReleaseClauses {
        ForcedRelease() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("18. semaphores and read-write locks")
    class SharedRecipes extends SharedRecipeClauses {
        SharedRecipes() {
            super(LockContractTest.this);
        }
    }

    @Nested
    @DisplayName("9. leader election")
    class Elections extends ElectionClauses {
        Elections() {
            super(LockContractTest.this);
        }
    }
}
