package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own {@link ZooKeeperEnsemble}: started before all tests, stopped after
 * them, healed before each (paused members resumed, killed members restarted, quorum awaited).
 * Register it on a {@code static} field; {@code @Nested} classes share it.
 */
public final class ZooKeeperEnsembleExtension extends ClassScopedExtension<ZooKeeperEnsemble> {

    /** A ensemble with default options. */
    public ZooKeeperEnsembleExtension() {
        this(ZooKeeperEnsemble.builder());
    }

    /** A ensemble started from {@code builder}. */
    public ZooKeeperEnsembleExtension(ZooKeeperEnsemble.Builder builder) {
        super(ZooKeeperEnsemble.class, Objects.requireNonNull(builder, "builder")::start, ZooKeeperEnsemble::close,
                ZooKeeperEnsemble::heal,
                "no ZooKeeper ensemble: register ZooKeeperEnsembleExtension on a static field or with @ExtendWith");
    }

    /**
     * The running ensemble.
     *
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    public ZooKeeperEnsemble ensemble() {
        return current();
    }
}
