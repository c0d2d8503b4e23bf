package dev.warden.testkit;

import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

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
public final class ZooKeeperServerExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final ClassScopedServer<ZooKeeperServer> server;

    public ZooKeeperServerExtension() {
        this(ZooKeeperServer.builder());
    }

    public ZooKeeperServerExtension(ZooKeeperServer.Builder builder) {
        Objects.requireNonNull(builder, "builder");
        this.server = new ClassScopedServer<>(builder::start, ZooKeeperServer::close,
                "no ZooKeeper server: register ZooKeeperServerExtension on a static field or with @ExtendWith");
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle (registered on an instance field)
     */
    public synchronized ZooKeeperServer server() {
        return server.get();
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        server.startFor(context);
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        server.closeFor(context);
    }

    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        ZooKeeperServer current = server();
        if (!current.isRunning()) {
            current.restart();
        } else if (current.isPaused()) {
            current.resume();
        }
    }
}
