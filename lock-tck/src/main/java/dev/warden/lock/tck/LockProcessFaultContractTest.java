package dev.warden.lock.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The fault contract ({@link LockFaultContractTest}) plus holders in other processes (fresh JVMs)
 * killed and frozen without releasing: group 11. A server backend's main test class extends this; its
 * other transports and topologies extend {@link LockFaultContractTest}, since a silent holder's expiry
 * is the servers' and does not change with how clients reach them (each of these clauses starts a JVM
 * and waits out a TTL: about 45 s a class on two cores).
 */
public abstract class LockProcessFaultContractTest extends LockFaultContractTest {

    @Nested
    @DisplayName("11. a holder's process killed or frozen")
    class ProcessFaults extends ProcessFaultClauses {
        ProcessFaults() {
            super(LockProcessFaultContractTest.this);
        }
    }
}
