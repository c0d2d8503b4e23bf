package dev.warden.lock.jdbc;

import dev.warden.lock.tck.LockProcessFaultContractTest;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.LinkedHashMap;
import java.util.Map;

/** The core and fault contracts against one real PostgreSQL server launched for this class. */
@DisplayName("jdbc backend, one PostgreSQL server")
class JdbcLockContractTest extends LockProcessFaultContractTest {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    private static PostgresServer server() {
        return postgres.server();
    }

    @Override
    protected Map<String, Object> settings() {
        return LockTable.settings(server());
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
        return "jdbc:postgresql://127.0.0.1:" + freePort() + "/" + server().database();
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

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
