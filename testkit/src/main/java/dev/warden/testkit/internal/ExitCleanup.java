package dev.warden.testkit.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs cleanup actions when the JVM exits, so a launched server does not outlive a test run that
 * was aborted or forgot to close it.
 */
final class ExitCleanup {

    private static final Set<Runnable> ACTIONS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> ACTIONS.forEach(Runnable::run), "testkit-exit-cleanup"));
    }

    private ExitCleanup() {
    }

    static void add(Runnable action) {
        ACTIONS.add(action);
    }

    static void remove(Runnable action) {
        ACTIONS.remove(action);
    }
}
