package dev.warden.lock.internal;

import dev.warden.lock.LeaseLost;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * One lease's lost listeners and the news of its loss: told once, in one task on the event thread,
 * and a promise that completes when they have run, so {@code isValid()} can wait for them before it
 * says false.
 *
 * <p>Concurrency: {@link #listeners} and {@link #lost} are guarded by {@code this}; {@link #told}
 * is thread-safe.
 */
final class LossNotice {

    private static final Logger log = LoggerFactory.getLogger(LossNotice.class);

    private final String name;
    private final Events events;
    private final List<Consumer<LeaseLost>> listeners = new ArrayList<>();
    private LeaseLost lost;
    private final CompletableFuture<Void> told = new CompletableFuture<>();

    LossNotice(String name, Events events) {
        this.name = name;
        this.events = events;
    }

    /** Adds a listener; one added after the loss is told at once, on the event thread. */
    void add(Consumer<LeaseLost> listener) {
        LeaseLost already;
        synchronized (this) {
            already = lost;
            if (already == null) {
                listeners.add(listener);
                return;
            }
        }
        events.execute(() -> tell(listener, already));
    }

    /** Records the loss and tells every listener, once; later calls do nothing. */
    void announce(LeaseLost event) {
        List<Consumer<LeaseLost>> toTell;
        synchronized (this) {
            if (lost != null) {
                return;
            }
            lost = event;
            toTell = List.copyOf(listeners);
            listeners.clear();
        }
        events.execute(() -> {
            try {
                toTell.forEach(l -> tell(l, event));
            } finally {
                told.complete(null);
            }
        });
    }

    /** The loss, once it happened. */
    synchronized java.util.Optional<LeaseLost> event() {
        return java.util.Optional.ofNullable(lost);
    }

    /**
     * Returns once the listeners told of the loss have run, unless called from a listener (on the
     * event thread they run after the current one). An interrupt stops the wait, flag restored.
     */
    void awaitTold() {
        if (told.isDone() || events.isEventTask()) {
            return;
        }
        try {
            told.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    private void tell(Consumer<LeaseLost> listener, LeaseLost event) {
        try {
            listener.accept(event);
        } catch (RuntimeException e) {
            log.warn("lease-lost listener for lock '{}' failed", name, e);
        }
    }
}
