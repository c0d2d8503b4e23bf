package dev.warden.lock.migration;

import dev.warden.lock.tck.LockMigrationContractTest;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/** The kit on a migrating step between two {@link Side}s; the fault clauses act on the backend moved to. */
abstract class MigrationTest extends LockMigrationContractTest {

    /** The backend being left. */
    abstract Side left();

    /** The backend moved to. */
    abstract Side target();

    /** Every pair here has etcd on one side: its leases are whole seconds, 2 s at least with default timing. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    /**
     * A child holder's TTL: three of the kit's, not two. A migrating grant's validity starts at the first backend's
     * last confirmed renewal, up to a third of the TTL before the hand-over, so a child's keeper starts with less
     * than the whole TTL left; a cold JVM with clients for two backends under CI load was seen to lose its lease as
     * EXPIRED while alive (RedisToEtcd, freedAfterTtl and frozenLeaderIsSucceeded, when the first grant's renewals
     * also stopped before the token floor was raised, which they no longer do).
     * The lease's end stays honest either way; what the clauses check is what follows a holder's death or freeze.
     */
    @Override
    protected Duration processTtl() {
        return ttl().multipliedBy(3);
    }

    @Override
    protected Map<String, Object> leftSettings() {
        return left().settings();
    }

    @Override
    protected Map<String, Object> targetSettings() {
        return target().settings();
    }

    @Override
    protected boolean hasLeftServerState(String namespace, String name) {
        return left().hasState(namespace, name);
    }

    @Override
    protected boolean hasTargetServerState(String namespace, String name) {
        return target().hasState(namespace, name);
    }

    @Override
    protected void removeOnLeftBackend(String namespace, String name) {
        left().remove(namespace, name);
    }

    @Override
    protected void removeOnTargetBackend(String namespace, String name) {
        target().remove(namespace, name);
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return target().address();
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return target().endpointsThrough(proxyPort);
    }

    @Override
    protected String unreachableEndpoints() {
        return target().unreachable();
    }

    @Override
    protected void pauseServer() {
        target().pause();
    }

    @Override
    protected void resumeServer() {
        target().resume();
    }
}
