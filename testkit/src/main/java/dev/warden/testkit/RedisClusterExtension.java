package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own {@link RedisCluster}: started before all tests, stopped after them,
 * healed before each (paused nodes resumed, killed nodes restarted, a stable cluster awaited).
 * Register it on a {@code static} field; {@code @Nested} classes share it. It is also injected as a
 * {@link RedisCluster} parameter.
 */
public final class RedisClusterExtension extends ClassScopedExtension<RedisCluster> {

    /** A cluster with default options. */
    public RedisClusterExtension() {
        this(RedisCluster.builder());
    }

    /** A cluster started from {@code builder}. */
    public RedisClusterExtension(RedisCluster.Builder builder) {
        super(RedisCluster.class, Objects.requireNonNull(builder, "builder")::start, RedisCluster::close,
                RedisCluster::heal,
                "no Redis Cluster: register RedisClusterExtension on a static field or with @ExtendWith");
    }

    /**
     * The running cluster.
     *
     * @throws IllegalStateException outside the class's lifecycle
     */
    public RedisCluster cluster() {
        return current();
    }
}
