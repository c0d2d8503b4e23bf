package dev.warden.testkit;

import java.util.function.Consumer;

/**
 * Gives a test class its own single-member {@link EtcdServer}: started before all tests, stopped after them,
 * healed before each (resumed if a previous test left it paused, restarted if it left it killed), so a fault test
 * that fails half-way does not fail the tests after it. Register it on a {@code static} field; {@code @Nested}
 * classes share it. The server is available from {@link #server()} and as an {@link EtcdServer} parameter.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdServerExtension etcd = new EtcdServerExtension();
 * }</pre>
 *
 * <p>With {@code WARDEN_ETCD_ENDPOINTS} set, the server is that cluster, which is neither stopped nor healed.
 * Keys are not deleted between tests; use distinct keys (a namespace per test class or per test).
 */
public final class EtcdServerExtension extends ClassScopedExtension<EtcdServer> {

    /** A server with default options ({@link EtcdServer#start()}). */
    public EtcdServerExtension() {
        super(EtcdServer.class, EtcdServer::start, EtcdServer::close, managedOnly(
                restartOrResume(EtcdServer::isRunning, EtcdServer::isPaused, EtcdServer::restart, EtcdServer::resume)),
                "no etcd server: register EtcdServerExtension on a static field or with @ExtendWith");
    }

    /** Fault controls exist only for a member testkit launched. */
    private static Consumer<EtcdServer> managedOnly(Consumer<EtcdServer> heal) {
        return server -> {
            if (server.isManaged()) {
                heal.accept(server);
            }
        };
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    public EtcdServer server() {
        return current();
    }
}
