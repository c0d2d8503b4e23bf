package dev.warden.quota.ledger.internal.journal;

import dev.warden.quota.EntryKind;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.journal.JournalEntry;
import io.lettuce.core.StreamMessage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * The part of one partition's journal that may not be in the database yet, as reconciliation reads
 * it: from the group's oldest pending entry (or the first undelivered one) on, by account. Read once
 * per partition per run and extended as snapshots move on, so a run reads each entry once; its size
 * is the ledger's backlog (the journal is trimmed below it) plus what arrives during the run. Whether
 * an entry is in the database after all is decided against the database, not here.
 *
 * <p>What a run holds is bounded by its {@link Budget}, whatever the backlog: a tail that would hold more
 * refuses the run ({@link Reason#RECOVERY_ORDER}: let the consumers drain first), because an entry must be
 * held from its read until the database is read (read later, it may have been persisted and trimmed in
 * between, and would count as neither).
 *
 * <p>Used by one reconciliation run on one thread.
 */
public final class JournalTail {

    /** One journal entry's effect on its account. */
    public record Change(String account, EntryKind kind, long delta, long amount, EntryId id, SortedMap<String, Long> lines) {

        Change(String account, EntryKind kind, long delta, long amount, EntryId id) {
            this(account, kind, delta, amount, id, Collections.emptySortedMap());
        }
    }

    /** How many entries one run's tails may hold together (guarded by the run's single thread). */
    public static final class Budget {
        private final long limit;
        private long held;

        public Budget(long limit) {
            this.limit = limit;
        }

        private void take(String stream) {
            if (held >= limit) {
                throw new QuotaException(Reason.RECOVERY_ORDER, "the journal holds more than " + limit + " entries the"
                        + " ledger has not persisted (reading " + stream + "), more than one reconciliation holds: let the"
                        + " consumers drain (their lag metric) and run it again");
            }
            held++;
        }

        private void give(long n) {
            held -= n;
        }

        long held() {
            return held;
        }
    }

    private static final int PAGE = 1000;

    private final JournalStreams streams;
    private final String stream;
    private final Budget budget;
    private final Map<String, List<Change>> byAccount = new HashMap<>();
    private EntryId oldest;
    private String next; // where the next read starts: '-', an id, or '(id' after the last one read
    private long size;

    private JournalTail(JournalStreams streams, String stream, Budget budget) {
        this.streams = streams;
        this.stream = stream;
        this.budget = budget;
    }

    /** Reads the stream from where the group's unacknowledged entries begin up to its end now. */
    public static JournalTail open(JournalStreams streams, String stream, Budget budget) {
        JournalTail tail = new JournalTail(streams, stream, budget);
        String delivered = streams.lastDelivered(stream);
        Set<String> pending = delivered == null ? Set.of() : streams.pendingIds(stream, PAGE);
        EntryId start = null;
        for (String id : pending) {
            EntryId e = EntryId.parse(id);
            start = start == null || e.compareTo(start) < 0 ? e : start;
        }
        EntryId deliveredId = delivered == null ? null : EntryId.parse(delivered);
        tail.next = start != null ? start.toString() : deliveredId != null ? "(" + delivered : "-";
        // Acknowledged entries up to the last delivered id are in the database: of those, only pending ones count.
        tail.read(null, id -> deliveredId == null || id.compareTo(deliveredId) > 0 || pending.contains(id.toString()));
        return tail;
    }

    /** Reads what was appended since, up to and including {@code upTo} (a snapshot's last id). */
    public void extendTo(EntryId upTo) {
        read(upTo, id -> true);
    }

    /** Removes and returns the account's entries (an account is compared once per run). */
    public List<Change> take(String account) {
        List<Change> changes = byAccount.remove(account);
        if (changes == null) {
            return List.of();
        }
        size -= changes.size();
        budget.give(changes.size());
        return changes;
    }

    /** The oldest entry held (or read), null when none: the database is searched from its time on. */
    EntryId oldest() {
        return oldest;
    }

    long size() {
        return size;
    }

    private void read(EntryId upTo, java.util.function.Predicate<EntryId> keep) {
        while (true) {
            JournalStreams.Page page = streams.from(stream, next, PAGE);
            boolean passed = false;
            for (StreamMessage<String, String> m : page.entries()) {
                EntryId id = EntryId.parse(m.getId());
                if (upTo != null && id.compareTo(upTo) > 0) {
                    passed = true;
                    break;
                }
                next = "(" + m.getId();
                if (!keep.test(id)) {
                    continue;
                }
                Change ch = change(m, id);
                if (ch != null) {
                    budget.take(stream);
                    byAccount.computeIfAbsent(ch.account(), k -> new ArrayList<>()).add(ch);
                    size++;
                    oldest = oldest == null || id.compareTo(oldest) < 0 ? id : oldest;
                }
            }
            if (passed || !page.more()) {
                return;
            }
        }
    }

    private static Change change(StreamMessage<String, String> m, EntryId id) {
        try {
            JournalEntry e = JournalEntry.decode(0, "", m.getId(), m.getBody());
            return new Change(e.account(), e.kind(), JournalEntry.totalDelta(e.kind(), e.amount()), e.amount(), id,
                    e.lines().isEmpty() ? Collections.emptySortedMap() : e.lines());
        } catch (RuntimeException e) {
            return null; // malformed: the consumer quarantines it
        }
    }
}
