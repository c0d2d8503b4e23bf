package dev.warden.testkit;

import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The server (or ensemble) an extension gives its test class. It is started by the first context
 * that needs it and closed when that context ends, so {@code @Nested} classes share the enclosing
 * class's server. Not thread-safe: the extension calls it under its own lock.
 */
final class ClassScopedServer<T> {

    private final Supplier<T> start;
    private final Consumer<T> close;
    private final String missing;
    private T server;
    private String ownerId;

    /** @param missing the message when there is no server, naming how to register the extension */
    ClassScopedServer(Supplier<T> start, Consumer<T> close, String missing) {
        this.start = start;
        this.close = close;
        this.missing = missing;
    }

    /**
     * @throws IllegalStateException outside the class's lifecycle, for example when the extension
     *     is registered on an instance field, where JUnit never calls {@code beforeAll}
     */
    T get() {
        if (server == null) {
            throw new IllegalStateException(missing);
        }
        return server;
    }

    /** Starts the server once; the context that started it is the one whose end closes it. */
    T startFor(ExtensionContext context) {
        if (server == null) {
            server = start.get();
            ownerId = context.getUniqueId();
        }
        return server;
    }

    /** Closes the server if {@code context} is the one that started it. */
    void closeFor(ExtensionContext context) {
        if (context.getUniqueId().equals(ownerId)) {
            T started = server;
            server = null;
            ownerId = null;
            close.accept(started);
        }
    }
}
