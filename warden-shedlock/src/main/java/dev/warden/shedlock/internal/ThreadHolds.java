package dev.warden.shedlock.internal;

import java.util.ArrayDeque;
import java.util.Optional;

/**
 * The holds bound to each thread, innermost last (ShedLock's {@code LockExtender} keeps its locks the same
 * way). A hold unbound from another thread (a lock unlocked elsewhere) is dropped by its own thread's next
 * look. Concurrency: each deque is touched only by its thread.
 */
final class ThreadHolds {

    private static final ThreadLocal<ArrayDeque<Hold>> HOLDS = new ThreadLocal<>();

    private ThreadHolds() {
    }

    static void push(Hold hold) {
        ArrayDeque<Hold> holds = HOLDS.get();
        if (holds == null) {
            holds = new ArrayDeque<>();
            HOLDS.set(holds);
        }
        holds.removeIf(h -> !h.isBound());
        holds.addLast(hold);
    }

    static void remove(Hold hold) {
        ArrayDeque<Hold> holds = HOLDS.get();
        if (holds != null) {
            holds.removeLastOccurrence(hold);
            forgetIfEmpty(holds);
        }
    }

    static Optional<Hold> current() {
        ArrayDeque<Hold> holds = HOLDS.get();
        if (holds == null) {
            return Optional.empty();
        }
        holds.removeIf(h -> !h.isBound());
        Optional<Hold> innermost = Optional.ofNullable(holds.peekLast());
        forgetIfEmpty(holds);
        return innermost;
    }

    private static void forgetIfEmpty(ArrayDeque<Hold> holds) {
        if (holds.isEmpty()) {
            HOLDS.remove();
        }
    }
}
