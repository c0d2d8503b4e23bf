package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own {@link RedisSentinel} deployment: started before all tests, stopped
 * after them, healed before each (paused nodes resumed, killed nodes restarted, a former primary made
 * a replica again, the sentinels' agreement awaited). Register it on a {@code static} field;
 * {@code @Nested} classes share it. It is also injected as a {@link RedisSentinel} parameter.
 */
public final class RedisSentinelExtension extends ClassScopedExtension<RedisSentinel> {

    /** A deployment with default options. */
    public RedisSentinelExtension() {
        this(RedisSentinel.builder());
    }

    /** A deployment started from {@code builder}. */
    public RedisSentinelExtension(RedisSentinel.Builder builder) {
        super(RedisSentinel.class, Objects.requireNonNull(builder, "builder")::start, RedisSentinel::close,
                RedisSentinel::heal,
                "no Redis Sentinel deployment: register RedisSentinelExtension on a static field or with @ExtendWith");
    }

    /**
     * The running deployment.
     *
     * @throws IllegalStateException outside the class's lifecycle
     */
    public RedisSentinel sentinel() {
        return current();
    }
}
