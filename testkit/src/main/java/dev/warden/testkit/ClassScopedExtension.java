package dev.warden.testkit;

import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * What every server extension does: start the server for the first context that needs it and
 * close it when that context ends (so {@code @Nested} classes share the enclosing class's server),
 * heal it before each test so one failing fault test does not poison the rest, and inject it as a
 * parameter of its type.
 */
abstract class ClassScopedExtension<S>
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, ParameterResolver {

    private final Class<S> type;
    private final Supplier<S> start;
    private final Consumer<S> close;
    private final Consumer<S> heal;
    private final String missing;
    private final boolean shared;
    private S server;
    private String ownerId;

    /** @param missing the message when there is no server, naming how to register the extension */
    ClassScopedExtension(Class<S> type, Supplier<S> start, Consumer<S> close, Consumer<S> heal, String missing) {
        this(type, start, close, heal, missing, false);
    }

    /**
     * @param shared one server for every class that registers this instance, started by the first and
     *               closed when the JVM exits, rather than one per class
     */
    ClassScopedExtension(Class<S> type, Supplier<S> start, Consumer<S> close, Consumer<S> heal, String missing,
                         boolean shared) {
        this.type = type;
        this.start = start;
        this.close = close;
        this.heal = heal;
        this.missing = missing;
        this.shared = shared;
    }

    /** Restarts a server a test killed, resumes one it left paused. */
    static <S> Consumer<S> restartOrResume(Predicate<S> running, Predicate<S> paused, Consumer<S> restart,
                                           Consumer<S> resume) {
        return s -> {
            if (!running.test(s)) {
                restart.accept(s);
            } else if (paused.test(s)) {
                resume.accept(s);
            }
        };
    }

    /**
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    synchronized S current() {
        if (server == null) {
            throw new IllegalStateException(missing);
        }
        return server;
    }

    private synchronized S startFor(ExtensionContext context) {
        if (server == null) {
            S started = start.get();
            server = started;
            ownerId = context.getUniqueId();
            if (shared) {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> close.accept(started), "testkit-shared-server"));
            }
        }
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        startFor(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        S started;
        synchronized (this) {
            if (shared || !context.getUniqueId().equals(ownerId)) {
                return;
            }
            started = server;
            server = null;
            ownerId = null;
        }
        close.accept(started);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        heal.accept(current());
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == type;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return startFor(extensionContext);
    }
}
