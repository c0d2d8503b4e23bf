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

    private final ClassScopedServer<ZooKeeperEnsemble> ensemble;

    public ZooKeeperEnsembleExtension() {
        this(ZooKeeperEnsemble.builder());
    }

    public ZooKeeperEnsembleExtension(ZooKeeperEnsemble.Builder builder) {
        Objects.requireNonNull(builder, "builder");
        this.ensemble = new ClassScopedServer<>(builder::start, ZooKeeperEnsemble::close,
                "no ZooKeeper ensemble: register ZooKeeperEnsembleExtension on a static field or with @ExtendWith");
    }

    /**
     * The running ensemble.
     *
     * @throws IllegalStateException outside the class's lifecycle (registered on an instance field)
     */
    public synchronized ZooKeeperEnsemble ensemble() {
        return ensemble.get();
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        ensemble.startFor(context);
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        ensemble.closeFor(context);
    }

    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        ensemble().heal();
    }
}
