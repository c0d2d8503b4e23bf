package dev.warden.testkit;

import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class its own {@link ZooKeeperEnsemble}: started before all tests, stopped after
 * them, healed before each (paused members resumed, killed members restarted, quorum awaited).
 * Register it on a {@code static} field; {@code @Nested} classes share it.
 */
public final class ZooKeeperEnsembleExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final ZooKeeperEnsemble.Builder builder;
    private ZooKeeperEnsemble ensemble;
    private String ownerId;

    public ZooKeeperEnsembleExtension() {
        this(ZooKeeperEnsemble.builder());
    }

    public ZooKeeperEnsembleExtension(ZooKeeperEnsemble.Builder builder) {
        this.builder = Objects.requireNonNull(builder, "builder");
    }

    /**
     * The running ensemble.
     *
     * @throws IllegalStateException outside the class's lifecycle (registered on an instance field)
     */
    public synchronized ZooKeeperEnsemble ensemble() {
        if (ensemble == null) {
            throw new IllegalStateException(
                    "no ZooKeeper ensemble: register ZooKeeperEnsembleExtension on a static field or with @ExtendWith");
        }
        return ensemble;
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (ensemble == null) {
            ensemble = builder.start();
            ownerId = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(ownerId)) {
            ZooKeeperEnsemble started = ensemble;
            ensemble = null;
            ownerId = null;
            started.close();
        }
    }

    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        ensemble().heal();
    }
}
