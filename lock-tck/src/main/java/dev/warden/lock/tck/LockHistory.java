package dev.warden.lock.tck;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockObserver;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Records every grant, renewal, release and loss of a run, with its token, and checks the whole
 * run afterwards: for each lock name, the intervals during which a holder could rely on its lease
 * never overlap, tokens strictly increase in grant order, and no renewal is sent for a lease once
 * its release has begun or it was lost.
 *
 * <p>Attach it to clients with {@link #observer(String)}. A holder's interval starts when the grant
 * arrived and ends when its release began, or, for a lost lease, at the last moment the lease said
 * it was valid. Timestamps come from one monotonic clock in this JVM, so histories of several
 * clients in one test compare directly.
 */
public final class LockHistory {

    /** What happened. */
    public enum Kind { GRANT, RENEW, RELEASE, LOST }

    /** One recorded event; {@code holder} tells holders apart (e.g. client and thread). */
    public record Event(Kind kind, String name, long token, String holder, long nanos) {
    }

    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    private final Map<String, Long> lossDetected = new ConcurrentHashMap<>();
    private final long originNanos = System.nanoTime();
    private final Instant origin = Instant.now();

    /** An observer recording the events of one client, labelled {@code holder}. */
    public LockObserver observer(String holder) {
        return new LockObserver() {
            @Override
            public void granted(String name, long fencingToken, Duration waited) {
                LockHistory.this.granted(name, fencingToken, holder);
            }

            @Override
            public void renewing(String name, long fencingToken) {
                events.add(new Event(Kind.RENEW, name, fencingToken, holder, System.nanoTime()));
            }

            @Override
            public void releasing(String name, long fencingToken) {
                LockHistory.this.releasing(name, fencingToken, holder);
            }

            @Override
            public void lost(LeaseLost event) {
                LockHistory.this.lost(event.name(), event.fencingToken(), holder, event.lastValidAt());
            }
        };
    }

    /** An event recorded elsewhere (another process, on the machine's monotonic clock). */
    public void record(Event event) {
        events.add(event);
    }

    public void granted(String name, long token, String holder) {
        events.add(new Event(Kind.GRANT, name, token, holder, System.nanoTime()));
    }

    /** Call just before releasing: from here on the holder no longer relies on the lock. */
    public void releasing(String name, long token, String holder) {
        events.add(new Event(Kind.RELEASE, name, token, holder, System.nanoTime()));
    }

    /** A loss, ending the holder's interval at the lease's last valid moment. */
    public void lost(String name, long token, String holder, Instant lastValidAt) {
        long nanos = originNanos + Duration.between(origin, lastValidAt).toNanos();
        lossDetected.putIfAbsent(name + "\u0000" + token, System.nanoTime());
        events.add(new Event(Kind.LOST, name, token, holder, nanos));
    }

    public List<Event> events() {
        return List.copyOf(events);
    }

    public int grants() {
        return count(Kind.GRANT);
    }

    public int count(Kind kind) {
        return (int) events.stream().filter(e -> e.kind() == kind).count();
    }

    /** Every violation of mutual exclusion or token order found in the run; empty when it is clean. */
    public List<String> violations() {
        return check(true);
    }

    /**
     * Only the token order: each grant of a name carries a higher token than every earlier grant of
     * it. For a run through a fault the backend's failure model allows to break mutual exclusion
     * (a Redis failover that lost a lock), where tokens, and the fenced resource, are what still holds.
     */
    public List<String> tokenOrderViolations() {
        return check(false);
    }

    /** When each lost lease's loss was first told, keyed by name and token; empty when none was lost. */
    public Map<String, Long> lossesDetected() {
        return Map.copyOf(lossDetected);
    }

    /** The key {@link #lossesDetected()} uses for a lease. */
    public static String leaseKey(String name, long token) {
        return name + "\u0000" + token;
    }

    private List<String> check(boolean overlaps) {
        List<String> problems = new ArrayList<>();
        Map<String, Long> ended = new HashMap<>();
        List<Event> renewals = new ArrayList<>();
        Map<String, Interval> byLease = intervals(problems, renewals, ended);
        for (Event r : overlaps ? renewals : List.<Event>of()) {
            Long end = ended.get(r.name() + "\u0000" + r.token());
            if (end != null && r.nanos() > end) {
                problems.add("renewal of '" + r.name() + "' token " + r.token() + " by " + r.holder()
                        + " after its release began or its loss was known");
            }
        }
        Map<String, List<Interval>> byName = new HashMap<>();
        for (Interval i : byLease.values()) {
            if (i.start != Long.MAX_VALUE) {
                byName.computeIfAbsent(i.name, n -> new ArrayList<>()).add(i);
            }
        }
        return overlapsAndOrder(byName, overlaps, problems);
    }

    /**
     * Each lease's interval, built from its own events whatever their order in time (a lease lost before
     * its first renewal is last known valid at its poll's send time, before the grant was recorded); adds
     * a token granted twice to {@code problems}, the renewals to {@code renewals}, and when each lease's
     * release began or loss was told to {@code ended}.
     */
    private Map<String, Interval> intervals(List<String> problems, List<Event> renewals, Map<String, Long> ended) {
        Map<String, Interval> byLease = new HashMap<>();
        ended.putAll(lossDetected);
        for (Event e : events) {
            String key = e.name() + "\u0000" + e.token();
            switch (e.kind()) {
                case GRANT -> {
                    Interval i = byLease.get(key);
                    if (i != null && i.start != Long.MAX_VALUE) {
                        problems.add("token " + e.token() + " of '" + e.name() + "' was granted twice");
                    } else if (i == null) {
                        byLease.put(key, new Interval(e.name(), e.token(), e.holder(), e.nanos()));
                    } else {
                        i.start = e.nanos();
                    }
                }
                case RENEW -> renewals.add(e);
                case RELEASE, LOST -> {
                    if (e.kind() == Kind.RELEASE) {
                        ended.merge(key, e.nanos(), Math::min);
                    }
                    Interval i = byLease.computeIfAbsent(key, k -> new Interval(e.name(), e.token(), e.holder(), Long.MAX_VALUE));
                    i.end = Math.min(i.end, e.nanos());
                }
            }
        }
        return byLease;
    }

    private static List<String> overlapsAndOrder(Map<String, List<Interval>> byName, boolean overlaps, List<String> problems) {
        for (List<Interval> intervals : byName.values()) {
            intervals.sort(Comparator.comparingLong(i -> i.start));
            long reliedUntil = Long.MIN_VALUE;
            Interval latest = null;
            for (Interval after : intervals) {
                if (latest != null) {
                    if (after.token <= latest.token) {
                        problems.add("token order: '" + after.name + "' granted token " + after.token + " to " + after.holder
                                + " after token " + latest.token + " to " + latest.holder);
                    }
                    if (overlaps && after.start < reliedUntil) {
                        problems.add("overlap: '" + after.name + "' still relied on until +" + (reliedUntil - after.start) / 1_000
                                + " us after " + after.holder + " (token " + after.token + ") was granted");
                    }
                }
                reliedUntil = Math.max(reliedUntil, Math.max(after.start, after.end));
                latest = after;
            }
        }
        return problems;
    }

    /**
     * The check for a shared name (a semaphore's, a read-write lock's): at no instant do the holders that
     * relied on their leases hold more than {@code limit} units together, and of two grants that could not
     * be held together, the later one carries the higher token. A lease's units are
     * {@code weights.get(leaseKey(name, token))} ({@link #leaseKey}); a lease missing there is an error.
     * Read-write locks: readers weigh 1, writers {@code limit}, with {@code limit} above the reader count.
     */
    public List<String> shareViolations(Map<String, Integer> weights, long limit) {
        List<String> problems = new ArrayList<>();
        List<Interval> held = new ArrayList<>();
        for (Interval i : intervals(problems, new ArrayList<>(), new HashMap<>()).values()) {
            if (i.start == Long.MAX_VALUE) {
                continue;
            }
            Integer w = weights.get(leaseKey(i.name, i.token));
            if (w == null) {
                problems.add("no weight recorded for '" + i.name + "' token " + i.token + " of " + i.holder);
                continue;
            }
            i.weight = w;
            held.add(i);
        }
        held.sort(Comparator.comparingLong(i -> i.start));
        for (int a = 0; a < held.size(); a++) {
            Interval first = held.get(a);
            // The sum only grows at a start: checking each start checks every instant.
            long together = overlapAt(held, first.start);
            if (together > limit) {
                problems.add("over the limit: " + together + " units of '" + first.name + "' held at once (limit " + limit
                        + ") when " + first.holder + " (token " + first.token + ") was granted");
            }
            for (int b = a + 1; b < held.size(); b++) {
                Interval later = held.get(b);
                if ((long) first.weight + later.weight > limit && later.token <= first.token) {
                    problems.add("token order: '" + later.name + "' granted token " + later.token + " to " + later.holder
                            + " after token " + first.token + " to " + first.holder + ", which it could not be held with");
                }
            }
        }
        return problems;
    }

    /** The units held at the instant {@code at}. */
    private static long overlapAt(List<Interval> held, long at) {
        long sum = 0;
        for (Interval i : held) {
            if (i.start <= at && at < i.end) {
                sum += i.weight;
            }
        }
        return sum;
    }

    private static final class Interval {
        int weight;
        final String name;
        final long token;
        final String holder;
        long start;
        long end = Long.MAX_VALUE;

        Interval(String name, long token, String holder, long start) {
            this.name = name;
            this.token = token;
            this.holder = holder;
            this.start = start;
        }
    }
}
