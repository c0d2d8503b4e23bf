package dev.warden.lock.internal.time;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link Timekeeper} whose time moves only when a test says so. {@link #advance} moves it
 * forward, running every alarm that falls due at its due time, in order, on the calling thread;
 * {@link #jump} moves it without running anything, as a paused process sees the world when it wakes.
 * Concurrency: guarded by {@code this}; tasks run outside the monitor.
 */
public final class VirtualClock implements Timekeeper {

    private static final Instant ORIGIN = Instant.parse("2030-01-01T00:00:00Z");

    private record Task(long due, long seq, Runnable run) {
    }

    private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) -> a.due != b.due
            ? Long.compare(a.due, b.due) : Long.compare(a.seq, b.seq));
    private long now;
    private long seq;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized Instant now() {
        return ORIGIN.plusNanos(now);
    }

    @Override
    public synchronized Alarm schedule(Runnable task, long delayNanos) {
        Task t = new Task(now + Math.max(0, delayNanos), seq++, task);
        tasks.add(t);
        return () -> {
            synchronized (VirtualClock.this) {
                tasks.remove(t);
            }
        };
    }

    /** Moves time forward by {@code d}, running each alarm due meanwhile at its due time. */
    public void advance(Duration d) {
        long target;
        synchronized (this) {
            target = now + d.toNanos();
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.due > target) {
                    now = target;
                    return;
                }
                tasks.poll();
                now = Math.max(now, next.due);
            }
            next.run.run();
        }
    }

    /** Moves time to {@code t} after the origin (not backwards), running what falls due. */
    public void advanceTo(Duration t) {
        advance(Duration.ofNanos(Math.max(0, t.toNanos() - nanoTime())));
    }

    /** Moves time forward by {@code d} without running anything: a process pause, seen on waking. */
    public synchronized void jump(Duration d) {
        now += d.toNanos();
    }

    /** Time since the origin. */
    public Duration elapsed() {
        return Duration.ofNanos(nanoTime());
    }

    /** The due times of the armed alarms, from the origin, soonest first. */
    public synchronized List<Duration> armed() {
        List<Duration> due = new ArrayList<>();
        tasks.stream().sorted((a, b) -> Long.compare(a.due, b.due)).forEach(t -> due.add(Duration.ofNanos(t.due)));
        return due;
    }
}
