package dev.warden.lock.internal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Within one client, contenders for one name wait here in arrival order so that only the head of
 * the queue talks to the server. A permit is a {@link Runnable} that passes the turn on; running it
 * twice does nothing.
 */
final class LocalQueue {

    private final Map<String, Line> lines = new HashMap<>();

    /** Completes with a permit when it is this caller's turn; cancel it to leave the queue. */
    CompletableFuture<Runnable> enter(String name) {
        synchronized (this) {
            Line line = lines.computeIfAbsent(name, Line::new);
            if (!line.busy) {
                line.busy = true;
                return CompletableFuture.completedFuture(permit(line));
            }
            CompletableFuture<Runnable> turn = new CompletableFuture<>();
            line.waiting.add(turn);
            return turn;
        }
    }

    /** Leaves the queue without waiting for the turn, so a long wait does not pile up dead entries. */
    void leave(String name, CompletableFuture<Runnable> turn) {
        if (!turn.cancel(false)) {
            return;
        }
        synchronized (this) {
            Line line = lines.get(name);
            if (line != null) {
                line.waiting.remove(turn);
            }
        }
    }

    /** Whether anyone holds or waits for a turn on {@code name}. */
    synchronized boolean isBusy(String name) {
        return lines.containsKey(name);
    }

    private Runnable permit(Line line) {
        AtomicBoolean used = new AtomicBoolean();
        return () -> {
            if (used.compareAndSet(false, true)) {
                passOn(line);
            }
        };
    }

    private void passOn(Line line) {
        while (true) {
            CompletableFuture<Runnable> next;
            synchronized (this) {
                next = line.waiting.poll();
                if (next == null) {
                    line.busy = false;
                    lines.remove(line.name);
                    return;
                }
            }
            // Completed outside the monitor: the next holder's continuation may run on this thread.
            if (next.complete(permit(line))) {
                return;
            }
        }
    }

    private static final class Line {
        final String name;
        final ArrayDeque<CompletableFuture<Runnable>> waiting = new ArrayDeque<>();
        boolean busy;

        Line(String name) {
            this.name = name;
        }
    }
}
