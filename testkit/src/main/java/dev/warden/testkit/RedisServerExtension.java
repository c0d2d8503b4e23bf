package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own {@link RedisServer}: started before all tests, stopped after them.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension(RedisServer.builder().appendOnly(true));
 * }</pre>
 *
 * <p>Register it on a {@code static} field (or with {@code @ExtendWith}); the server is available
 * from {@link #server()} and as a {@link RedisServer} parameter of test methods and constructors.
 * {@code @Nested} classes share the enclosing class's server.
 *
 * <p>Before each test the server is healed: resumed if a previous test left it paused, restarted if
 * a previous test killed it. A fault test that fails half-way therefore does not fail the tests after
 * it. Data is not flushed between tests; use distinct keys.
 */
public final class RedisServerExtension extends ClassScopedExtension<RedisServer> {

    /** A server with default options. */
    public RedisServerExtension() {
        this(RedisServer.builder());
    }

    /** A server started from {@code builder}. */
    public RedisServerExtension(RedisServer.Builder builder) {
        super(RedisServer.class, Objects.requireNonNull(builder, "builder")::start, RedisServer::close,
                restartOrResume(RedisServer::isRunning, RedisServer::isPaused, RedisServer::restart, RedisServer::resume),
                "no Redis server: register RedisServerExtension on a static field or with @ExtendWith");
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    public RedisServer server() {
        return current();
    }
}
