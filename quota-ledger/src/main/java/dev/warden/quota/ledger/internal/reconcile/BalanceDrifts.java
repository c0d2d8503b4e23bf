package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.journal.JournalTail.Change;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An account's named balances and what it holds, each compared on its own beside its balance (available +
 * held, which {@link AccountComparison} compares): from the database's figure, less what entries beyond the
 * snapshot changed, plus what entries not yet persisted change, against Redis.
 */
public final class BalanceDrifts {

    private BalanceDrifts() {
    }

    /**
     * The account's named balances, each compared like the main balance: the database's row (0 when it has
     * none: a row comes with a balance's first posting) less what postings beyond the snapshot added, plus
     * the lines of postings not yet persisted, against Redis (0 when absent).
     */
    static void named(String a, int p, Map<String, Long> inRedis, Map<String, Long> db, List<Change> after,
                                    List<Change> inFlight, Set<EntryId> persisted, EntryId last,
                                    List<ReconciliationReport.Drift> drifted) {
        Map<String, Long> expected = new TreeMap<>(db);
        Map<String, Long> pending = new TreeMap<>();
        Set<String> moving = new HashSet<>();
        for (Change ch : after) {
            ch.lines().forEach((name, d) -> {
                expected.merge(name, -d, Long::sum);
                moving.add(name);
            });
        }
        for (Change ch : inFlight) {
            if (persisted.contains(ch.id()) || ch.id().compareTo(last) > 0) {
                continue;
            }
            ch.lines().forEach((name, d) -> {
                expected.merge(name, d, Long::sum);
                pending.merge(name, d, Long::sum);
                moving.add(name);
            });
        }
        Set<String> names = new TreeSet<>(expected.keySet());
        names.addAll(inRedis.keySet());
        for (String name : names) {
            long r = inRedis.getOrDefault(name, 0L);
            long e = expected.getOrDefault(name, 0L);
            if (r != e) {
                drifted.add(new ReconciliationReport.Drift(a, p,
                        inRedis.containsKey(name) ? OptionalLong.of(r) : OptionalLong.empty(),
                        db.containsKey(name) ? OptionalLong.of(db.get(name)) : OptionalLong.empty(),
                        pending.getOrDefault(name, 0L), OptionalLong.of(e), r - e, !moving.contains(name), name));
            }
        }
    }

    /**
     * What the account holds, compared on its own (available + held hides a hold the other side lacks): the
     * database's held figure less what entries beyond the snapshot moved, plus what unpersisted entries move.
     */
    static void held(String a, int p, OptionalLong inRedis, Long db, List<Change> after, List<Change> inFlight,
                                  Set<EntryId> persisted, EntryId last, boolean moving, List<ReconciliationReport.Drift> drifted) {
        if (inRedis.isEmpty() || db == null) {
            return; // an account missing on a side drifts as a whole already
        }
        long expected = db;
        long pending = 0;
        for (Change ch : after) {
            expected -= JournalEntry.heldDelta(ch.kind(), ch.amount());
        }
        for (Change ch : inFlight) {
            if (!persisted.contains(ch.id()) && ch.id().compareTo(last) <= 0) {
                long d = JournalEntry.heldDelta(ch.kind(), ch.amount());
                expected += d;
                pending += d;
            }
        }
        if (inRedis.getAsLong() != expected) {
            drifted.add(new ReconciliationReport.Drift(a, p, inRedis, OptionalLong.of(db), pending, OptionalLong.of(expected),
                    inRedis.getAsLong() - expected, !moving, ReconciliationReport.HELD));
        }
    }
}
