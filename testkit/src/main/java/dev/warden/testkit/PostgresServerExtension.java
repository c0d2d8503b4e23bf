package dev.warden.testkit;

import java.util.Objects;

/**
 * Gives a test class its own {@link PostgresServer}: started before all tests, stopped after them.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresServerExtension postgres =
 *         new PostgresServerExtension(PostgresServer.builder().setting("max_connections", "50"));
 * }</pre>
 *
 * <p>Register it on a {@code static} field (or with {@code @ExtendWith}); the server is available
 * from {@link #server()} and as a {@link PostgresServer} parameter of test methods and constructors.
 * {@code @Nested} classes share the enclosing class's server.
 *
 * <p>Before each test the server is healed: resumed if a previous test left it paused, restarted if
 * a previous test stopped or killed it. A fault test that fails half-way therefore does not fail the
 * tests after it. Data is not dropped between tests; use distinct tables or rows.
 */
public final class PostgresServerExtension extends ClassScopedExtension<PostgresServer> {

    private static final PostgresServerExtension SHARED = new PostgresServerExtension(PostgresServer.builder(), true);

    /** A server with default options. */
    public PostgresServerExtension() {
        this(PostgresServer.builder());
    }

    /** A server started from {@code builder}. */
    public PostgresServerExtension(PostgresServer.Builder builder) {
        this(builder, false);
    }

    private PostgresServerExtension(PostgresServer.Builder builder, boolean shared) {
        super(PostgresServer.class, Objects.requireNonNull(builder, "builder")::start, PostgresServer::close,
                restartOrResume(PostgresServer::isRunning, PostgresServer::isPaused, PostgresServer::restart, PostgresServer::resume),
                "no PostgreSQL server: register PostgresServerExtension on a static field or with @ExtendWith", shared);
    }

    /**
     * One server with default options for every test class of this JVM that registers it: started by the
     * first, stopped when the JVM exits. For classes that keep to a schema of their own and never stop,
     * kill or pause the server (those register a server of their own); it saves an {@code initdb} and a
     * start per class.
     */
    public static PostgresServerExtension shared() {
        return SHARED;
    }

    /**
     * The running server.
     *
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    public PostgresServer server() {
        return current();
    }
}
