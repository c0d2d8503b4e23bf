package dev.warden.lock.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The failover contract, for a backend whose server has a primary that can be replaced: its primary
 * (Redis primary, etcd leader) is killed in the middle of a contended run and a replica takes over.
 * Whatever the backend's replication can lose in that moment, fencing tokens never go back, a fenced
 * resource never accepts a superseded holder, and every holder whose lock was lost learns it within
 * one renewal interval of the new primary. A backend without a replaceable primary does not extend
 * this class: the capability is the type.
 *
 * <p>Each test class that extends it gets its own deployment (these clauses kill its primary); a
 * subclass says how to reach it and how to fail it over.
 */
public abstract class LockFailoverContractTest extends LockKit {

    /**
     * Cuts the primary off from its replicas, so that the writes made from now on are lost when it
     * dies (Redis replicates asynchronously: its replica's link is cut and held down). A backend whose
     * replication cannot lose acknowledged writes does nothing.
     *
     * @param names the locks the run contends on, all served by the primary that will be killed
     */
    protected abstract void holdBackReplication(String namespace, List<String> names);

    /** Kills the primary of {@code names} (SIGKILL) and lets the replicas go on; returns at once. */
    protected abstract void killPrimary(String namespace, List<String> names);

    /** Waits until a new primary serves {@code names}. */
    protected abstract void awaitNewPrimary(String namespace, List<String> names);

    /**
     * Names of {@code count} locks served by one primary: by default any new names (one primary serves
     * every lock); a Cluster picks names whose slots one primary serves.
     */
    protected List<String> namesOnOnePrimary(int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            names.add(newName());
        }
        return names;
    }

    /**
     * Whether the backend's failure model lets two holders of one lock overlap in time through this
     * failover (Redis: a grant the dead primary never replicated is unknown to the new one). When it
     * does not (a quorum's commit survives its leader), the clause asserts that none did; either way
     * the count is printed and the fenced registers must refuse every superseded holder.
     */
    protected boolean overlapsAllowed() {
        return true;
    }

    /**
     * Whether a lease held through the fault outlives it when the failover leaves it time to renew on the
     * new primary (what it had left at the cut, less the failover, exceeds the time a renewal takes to get
     * through). True where clients talk to the primary alone (Redis: the frozen replica serves no client).
     * A quorum backend's client may be connected to the member that is frozen or killed; its renewals then
     * wait for a reconnection and may run out of time: such a backend answers false, and the clause only
     * asks that a lease lost that way was told.
     */
    protected boolean leasesOutliveAShortFailover() {
        return true;
    }

    /** Longer than a failover takes, so a holder that kept its lock keeps renewing through it. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(10);
    }

    @Nested
    @DisplayName("14. a failover in the middle of a contended run")
    class Failover extends FailoverClauses {
        Failover() {
            super(LockFailoverContractTest.this);
        }
    }
}
