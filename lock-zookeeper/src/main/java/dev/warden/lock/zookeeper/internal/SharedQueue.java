package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Share;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A shared name's queue and the grant rule over it. Each contender is an ephemeral sequential child
 * of {@link Paths#sharedPath} named {@code _c_<uuid>-<weight>-<limit>-share-<10-digit sequence>}:
 * Curator's protection prefix, then its share, so one listing of the children tells every entry's
 * weight without reading any node; the node's data is its owner. The sequence is the arrival order
 * (ZooKeeper numbers a parent's children in the order their creates commit, the order of their
 * czxids too).
 *
 * <p>An entry is granted when the weights of every entry ahead of it plus its own fit its limit
 * ({@link Share#fitsBehind}). Entries ahead only ever leave, so a grant stays a grant. One that does
 * not fit waits for the deletions that can change its answer: when some single entry ahead weighs
 * more than {@code limit - weight} (a writer waiting on anyone, a reader behind a writer, a large
 * request), nothing is granted while it exists, so the nearest such entry is the one to watch, as
 * the lock's queue watches the node just ahead. Otherwise any few deletions ahead may be enough and
 * no single node tells when, so the attempt watches the parent's children. Stateless.
 */
final class SharedQueue {

    /** What ends an entry's name before ZooKeeper's sequence. */
    static final String MARK = "-share-";

    private SharedQueue() {
    }

    /** The name an entry for {@code share} is created with (before the protection prefix and the sequence). */
    static String nodeName(Share share) {
        return share.weight() + "-" + share.limit() + MARK;
    }

    /** One entry as listed: its child name, weight and arrival sequence. */
    record Entry(String child, int weight, long sequence) {
    }

    /** What a poll found: granted, gone, or which change to wait for. */
    sealed interface Verdict permits Granted, Gone, WatchEntry, WatchChildren {
    }

    /** The entry fits behind the ones ahead. */
    record Granted() implements Verdict {
    }

    /** The entry is not in the queue: its session expired, or it was deleted. */
    record Gone() implements Verdict {
    }

    /** Nothing is granted while {@code child}, the nearest entry ahead too heavy to share with, exists. */
    record WatchEntry(String child) implements Verdict {
    }

    /** Any deletion among {@code ahead} (the entries ahead as listed) may be what grants. */
    record WatchChildren(List<String> ahead) implements Verdict {
    }

    /** Applies the grant rule to the entry {@code mine} for {@code share} in {@code children}. */
    static Verdict decide(List<String> children, String mine, Share share) {
        List<Entry> queue = entries(children);
        long ahead = 0;
        // An entry ahead heavier than this spare room blocks alone: the nearest one is the wait's target.
        long spare = (long) share.limit() - share.weight();
        Entry blocker = null;
        List<String> before = new ArrayList<>();
        for (Entry e : queue) {
            if (e.child().equals(mine)) {
                if (share.fitsBehind(ahead)) {
                    return new Granted();
                }
                return blocker != null ? new WatchEntry(blocker.child()) : new WatchChildren(List.copyOf(before));
            }
            ahead += e.weight();
            before.add(e.child());
            if (e.weight() > spare) {
                blocker = e;
            }
        }
        return new Gone();
    }

    /** The entries among {@code children}, first in the queue first; anything else is skipped. */
    static List<Entry> entries(List<String> children) {
        List<Entry> queue = new ArrayList<>(children.size());
        for (String child : children) {
            parse(child).ifPresent(queue::add);
        }
        queue.sort(Comparator.comparingLong(Entry::sequence));
        return queue;
    }

    /** {@code ...-<weight>-<limit>-share-<sequence>}, or empty for a node that is not an entry. */
    static Optional<Entry> parse(String child) {
        int mark = child.lastIndexOf(MARK);
        if (mark < 0 || child.length() - mark - MARK.length() < 10) {
            return Optional.empty();
        }
        String head = child.substring(0, mark);
        int limitAt = head.lastIndexOf('-');
        if (limitAt <= 0) {
            return Optional.empty();
        }
        int weightAt = head.lastIndexOf('-', limitAt - 1);
        try {
            int weight = Integer.parseInt(head.substring(weightAt + 1, limitAt));
            int limit = Integer.parseInt(head.substring(limitAt + 1));
            long sequence = Long.parseLong(child.substring(mark + MARK.length()));
            return weight < 1 || limit < weight ? Optional.empty() : Optional.of(new Entry(child, weight, sequence));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
