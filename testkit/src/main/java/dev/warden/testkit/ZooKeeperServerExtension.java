package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own standalone {@link ZooKeeperServer}: started before all tests, stopped
 * after them, healed before each (resumed if left paused, restarted if left killed). Register it on
 * a {@code static} field; {@code @Nested} classes share it.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();
 * }</pre>
 */
public final class ZooKeeperServerExtension extends ClassScopedExtension<ZooKeeperServer> {

    /** A server with default options. */
    public ZooKeeperServerExtension() {
        this(ZooKeeperServer.builder());
    }

    /** A server started from {@code builder}. */
    public ZooKeeperServerExtension(ZooKeeperServer.Builder builder) {
        super(ZooKeeperServer.class, Objects.requireNonNull(builder, "builder")::start, ZooKeeperServer::close,
                restartOrResume(ZooKeeperServer::isRunning, ZooKeeperServer::isPaused, ZooKeeperServer::restart, ZooKeeperServer::resume),
                "no ZooKeeper server: register ZooKeeperServerExtension on a static field or with @ExtendWith");
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    public ZooKeeperServer server() {
        return current();
    }
}
