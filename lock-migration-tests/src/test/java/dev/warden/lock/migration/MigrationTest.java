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
