package dev.warden.examples.demo.support;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Closes what an example started, last started first. Idempotent and safe to call from a shutdown
 * hook while the example is still closing: each resource is closed once, and a failure to close one
 * is printed and does not stop the rest.
 */
public final class Closer implements AutoCloseable {

    private final Deque<Named> stack = new ArrayDeque<>();

    private record Named(String what, AutoCloseable resource) {
    }

    /** Registers {@code resource} and returns it. */
    public synchronized <T extends AutoCloseable> T add(String what, T resource) {
        stack.push(new Named(what, resource));
        return resource;
    }

    @Override
    public void close() {
        while (true) {
            Named next;
            synchronized (this) {
                next = stack.poll();
            }
            if (next == null) {
                return;
            }
            try {
                next.resource().close();
            } catch (Exception e) {
                System.err.println("warning: could not close " + next.what() + ": " + e);
            }
        }
    }
}
