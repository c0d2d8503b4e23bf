package dev.warden.lock.jdbc;

import dev.warden.lock.tck.LockLeaseCacheContractTest;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The core and fault contracts with lease caching on: every released lock is kept for the next acquisition
 * (for 300 ms, longer than most clauses wait between a release and the next acquisition), against one real
 * PostgreSQL server for this class.
 */
@DisplayName("jdbc backend, leases kept (warden.lock.lease-cache)")
class JdbcLeaseCacheContractTest extends LockLeaseCacheContractTest {

    /** Longer than most clauses take between a release and the next acquisition, short enough not to slow them. */
    private static final Duration KEPT_FOR = Duration.ofMillis(300);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    private static PostgresServer server() {
        return postgres.server();
    }

    @Override
    protected Map<String, Object> settings() {
        Map<String, Object> settings = new HashMap<>(LockTable.settings(server()));
        settings.put("warden.lock.lease-cache", KEPT_FOR);
        return settings;
    }

    @Override
    protected Duration keptFor() {
        return KEPT_FOR;
    }

    /** Its grants reserve no tokens: the client reserves each kept grant's block at its first release. */
    @Override
    protected boolean keptReleaseAsksServer() {
        return true;
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server().host(), server().port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "jdbc:postgresql://127.0.0.1:" + proxyPort + "/" + server().database();
    }

    @Override
    protected String unreachableEndpoints() {
        return "jdbc:postgresql://127.0.0.1:" + JdbcLockContractTest.freePort() + "/" + server().database();
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return LockTable.held(server(), namespace, name);
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        LockTable.delete(server(), namespace, name);
    }

    @Override
    protected void pauseServer() {
        server().pause();
    }

    @Override
    protected void resumeServer() {
        if (server().isPaused()) {
            server().resume();
        }
    }
}
