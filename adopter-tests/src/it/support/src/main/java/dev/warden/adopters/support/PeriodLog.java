package dev.warden.adopters.support;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What a scheduled job did on several instances of an application in one JVM, in the order it happened: each
 * instance's scheduler firing for a period (read on that instance's clock, before any lock is tried), and each
 * run of the job's body under its lock (the period, the instance, the lock's fencing token). Thread-safe; waits
 * are on conditions with deadlines.
 */
public final class PeriodLog {

    /** One fire or run, numbered in the order this log saw them. */
    public record Event(long seq, boolean run, String instance, Instant period, long fencingToken) {
    }

    private final List<Event> events = new ArrayList<>();

    /** An instance's scheduler fired for {@code period}, before ShedLock tried the lock. */
    public synchronized void fired(String instance, Instant period) {
        events.add(new Event(events.size(), false, instance, period, 0));
        notifyAll();
    }

    /** The job ran for {@code period} on {@code instance}, under a lock with {@code fencingToken}. */
    public synchronized void ran(String instance, Instant period, long fencingToken) {
        events.add(new Event(events.size(), true, instance, period, fencingToken));
        notifyAll();
    }

    public synchronized List<Event> events() {
        return List.copyOf(events);
    }

    /** Waits until {@code condition} holds over the events; fails the test at the deadline. */
    public synchronized void await(Duration deadline, String what, Predicate<List<Event>> condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.test(events)) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                fail("within " + deadline + ": " + what + "; events: " + events);
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for " + what);
            }
        }
    }

    /** How many times {@code instance} ran the job. */
    public static long runs(List<Event> events, String instance) {
        return events.stream().filter(e -> e.run() && e.instance().equals(instance)).count();
    }

    /**
     * The job ran exactly once per period, in consecutive periods from its first run to its last, its fencing
     * tokens rising with the periods: whichever instance fired first for a period ran it, and no instance ran a
     * period already run. And the case this is about happened at least {@code lateFiresAtLeast} times: the
     * {@code late} instance fired for a period (the one its late clock says) after that period had been run.
     * {@code period} is the schedule's period.
     */
    public void assertOncePerPeriod(String late, Duration period, int lateFiresAtLeast) {
        List<Event> all = events();
        Map<Instant, List<Event>> runsByPeriod = all.stream().filter(Event::run)
                .collect(Collectors.groupingBy(Event::period, TreeMap::new, Collectors.toList()));
        assertFalse(runsByPeriod.isEmpty(), "no run at all");
        runsByPeriod.forEach((p, runs) -> assertEquals(1, runs.size(), () -> "period " + p + " ran " + runs.size() + " times: " + runs));

        List<Instant> periods = List.copyOf(runsByPeriod.keySet());
        for (int i = 1; i < periods.size(); i++) {
            assertEquals(period, Duration.between(periods.get(i - 1), periods.get(i)),
                    "a period without a run between " + periods.get(i - 1) + " and " + periods.get(i) + ": " + runsByPeriod);
            long before = runsByPeriod.get(periods.get(i - 1)).get(0).fencingToken();
            long after = runsByPeriod.get(periods.get(i)).get(0).fencingToken();
            assertTrue(after > before, "fencing token " + after + " of " + periods.get(i) + " not above " + before);
        }

        long lateOnRunPeriods = lateFiresOnRunPeriods(all, late);
        assertTrue(lateOnRunPeriods >= lateFiresAtLeast, () -> "the late instance fired " + lateOnRunPeriods
                + " times for a period already run, expected at least " + lateFiresAtLeast + ": " + all);
    }

    /** How many times {@code late} fired for a period that had already been run (by any instance) when it fired. */
    public static long lateFiresOnRunPeriods(List<Event> events, String late) {
        return events.stream().filter(e -> !e.run() && e.instance().equals(late))
                .filter(fire -> events.stream().anyMatch(e -> e.run() && e.period().equals(fire.period()) && e.seq() < fire.seq()))
                .count();
    }
}
