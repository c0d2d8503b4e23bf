package dev.warden.lock.internal;

import dev.warden.lock.spi.Grant;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Within one client, contenders for one name wait here in arrival order so that only the head of
 * the queue talks to the server. The head holds a {@link Permit}; running it passes the turn on,
 * and running it twice does nothing. A releasing holder may instead claim the next waiter and hand
 * it the turn together with a grant the server made for it in the same step as the release.
 *
 * <p>Concurrency: {@code lines} and every {@link Line} are guarded by this queue's monitor; a
 * permit's {@code used} flag is atomic. Turns are completed outside the monitor, since the next
 * holder's continuation may run on the completing thread.
 */
final class LocalQueue {

    /**
     * A turn: the permit to pass on later, and a grant already taken on the waiter's behalf
     * (null: poll the server yourself).
     */
    record Turn(Permit permit, Grant grant, long grantSentAtNanos) {
    }

    /** A queued contender: the turn it waits for, and the owner a grant must be made out to. */
    record Waiter(CompletableFuture<Turn> turn, String owner) {
    }

    private final Map<String, Line> lines = new HashMap<>();

    /** Completes with a turn when it is this caller's; cancel it to leave the queue. */
    CompletableFuture<Turn> enter(String name, String owner) {
        synchronized (this) {
            Line line = lines.computeIfAbsent(name, Line::new);
            if (!line.busy) {
                line.busy = true;
                return CompletableFuture.completedFuture(new Turn(new Permit(line), null, 0));
            }
            CompletableFuture<Turn> turn = new CompletableFuture<>();
            line.waiting.add(new Waiter(turn, owner));
            return turn;
        }
    }

    /** Leaves the queue without waiting for the turn, so a long wait does not pile up dead entries. */
    void leave(String name, CompletableFuture<Turn> turn) {
        if (!turn.cancel(false)) {
            return;
        }
        synchronized (this) {
            Line line = lines.get(name);
            if (line != null) {
                line.waiting.removeIf(w -> w.turn() == turn);
            }
        }
    }

    /**
     * A turn outside every line, for a shared name's contenders (permits, readers, writers): they may hold
     * together, so each talks to the server itself. Its permit passes nothing on and claims no one.
     */
    Turn alone() {
        return new Turn(new Permit(null), null, 0);
    }

    /** Whether anyone holds or waits for a turn on {@code name}. */
    synchronized boolean isBusy(String name) {
        return lines.containsKey(name);
    }

    private void passOn(Line line) {
        while (true) {
            Waiter next;
            synchronized (this) {
                next = line.waiting.poll();
                if (next == null) {
                    line.busy = false;
                    lines.remove(line.name);
                    return;
                }
            }
            // Completed outside the monitor: the next holder's continuation may run on this thread.
            if (next.turn().complete(new Turn(new Permit(line), null, 0))) {
                return;
            }
        }
    }

    /** The right to talk to the server for one name; passes on once. */
    final class Permit implements Runnable {

        private final Line line;
        private final AtomicBoolean used = new AtomicBoolean();

        private Permit(Line line) {
            this.line = line;
        }

        @Override
        public void run() {
            if (used.compareAndSet(false, true) && line != null) {
                passOn(line);
            }
        }

        /** Removes and returns the next live waiter, or null; give it back with {@link #unclaim}. */
        Waiter claimNext() {
            synchronized (LocalQueue.this) {
                if (used.get() || line == null) {
                    return null;
                }
                Waiter next;
                do {
                    next = line.waiting.poll();
                } while (next != null && next.turn().isDone());
                return next;
            }
        }

        /** Puts a claimed waiter back at the head of the line (a hand-off that did not happen). */
        void unclaim(Waiter waiter) {
            synchronized (LocalQueue.this) {
                line.waiting.addFirst(waiter);
            }
        }

        /**
         * Gives a claimed waiter the turn with a grant made out to it. False when the waiter left
         * meanwhile: the turn passes on and the caller must release the grant.
         */
        boolean handTo(Waiter waiter, Grant grant, long grantSentAtNanos) {
            if (!used.compareAndSet(false, true)) {
                throw new IllegalStateException("permit already passed on");
            }
            if (waiter.turn().complete(new Turn(new Permit(line), grant, grantSentAtNanos))) {
                return true;
            }
            passOn(line);
            return false;
        }
    }

    private static final class Line {
        final String name;
        final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
        boolean busy;

        Line(String name) {
            this.name = name;
        }
    }
}
