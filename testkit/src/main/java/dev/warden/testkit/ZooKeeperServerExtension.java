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

    private final ZooKeeperServer.Builder builder;
    private ZooKeeperServer server;
    private String ownerId;

    public ZooKeeperServerExtension() {
        this(ZooKeeperServer.builder());
    }

    public ZooKeeperServerExtension(ZooKeeperServer.Builder builder) {
        this.builder = Objects.requireNonNull(builder, "builder");
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle (registered on an instance field)
     */
    public synchronized ZooKeeperServer server() {
        if (server == null) {
            throw new IllegalStateException(
                    "no ZooKeeper server: register ZooKeeperServerExtension on a static field or with @ExtendWith");
        }
        return server;
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (server == null) {
            server = builder.start();
            ownerId = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(ownerId)) {
            ZooKeeperServer started = server;
            server = null;
            ownerId = null;
            started.close();
        }
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
