package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.EntryKind;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.internal.journal.JournalTail.Change;
import dev.warden.quota.ledger.internal.journal.JournalTail;
import dev.warden.quota.ledger.internal.journal.LedgerScripts;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.redis.KeyLayout;
import io.lettuce.core.StreamMessage;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Compares a group of accounts of one partition (each named balance too, the same way: a balance
 * missing on a side counts as 0 there): each account's Redis balance against the
 * database's balance plus (balances are available + held on both sides, so a hold, release or expiry
 * changes nothing here and a capture counts as a deduction) the changes of its journal entries not yet in the database. The figures
 * are taken so that traffic during the comparison does not show as drift: the group's balances are
 * read in one script together with the journal's last id and the server's time; the journal tail is
 * extended to that id; then the database is read in one repeatable-read transaction. Entries the
 * database holds beyond the snapshot (appended after it, and persisted already) are taken back out,
 * and tail entries the database holds by then are not counted twice. The database's figures are
 * {@link LedgerFigures}'; named balances and held quota are compared by {@link BalanceDrifts}.
 *
 * <p>Used by one reconciliation run on one thread.
 */
public final class AccountComparison {

    /** What the snapshot script found, and the drifts. */
    public record Result(boolean markerMissing, List<ReconciliationReport.Drift> drifted, long unpersisted) {
    }

    private static final int PAGE = 1000;

    private final KeyLayout layout;
    private final JournalStreams streams;
    private final long waitMillis;

    public AccountComparison(KeyLayout layout, JournalStreams streams, long waitMillis) {
        this.layout = layout;
        this.streams = streams;
        this.waitMillis = waitMillis;
    }

    /**
     * @param tails the run's journal tail of each partition (a split account's buckets read several)
     */
    public Result compare(Connection c, int p, List<String> group, java.util.function.IntFunction<JournalTail> tails)
            throws SQLException {
        String stream = layout.journal(p);
        JournalTail tail = tails.apply(p);
        List<Object> reply = snapshot(p, group);
        boolean markerMissing = "no_marker".equals(reply.get(0));
        EntryId last = EntryId.parse((String) reply.get(1));
        long snapshotMs = Long.parseLong((String) reply.get(2));
        Map<String, OptionalLong> redis = new HashMap<>();
        Map<String, Map<String, Long>> redisNamed = new HashMap<>();
        Map<String, OptionalLong> redisHeld = new HashMap<>();
        for (int i = 0; i < group.size(); i++) {
            String h = (String) reply.get(3 + 3 * group.size() + i);
            redisHeld.put(group.get(i), h.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(h)));
            String b = (String) reply.get(3 + i);
            redis.put(group.get(i), b.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(b)));
            Map<String, Long> named = new TreeMap<>();
            String text = (String) reply.get(3 + group.size() + i);
            if (!text.isEmpty()) {
                for (String pair : text.split(",")) {
                    int eq = pair.indexOf('=');
                    named.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
                }
            }
            redisNamed.put(group.get(i), named);
        }
        List<ReconciliationReport.Drift> drifted = new ArrayList<>();
        long unpersisted = 0;
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            int buckets = Integer.parseInt((String) reply.get(3 + 2 * group.size() + i));
            if (buckets > 1) {
                unpersisted += compareSplit(c, p, group.get(i), buckets, tails, drifted);
            } else {
                accounts.add(group.get(i));
            }
        }
        if (accounts.isEmpty()) {
            return new Result(markerMissing, drifted, unpersisted);
        }
        tail.extendTo(last);
        Set<EntryId> appended = appendedAfter(stream, last);
        Map<String, List<Change>> inFlight = new HashMap<>();
        EntryId window = last;
        for (String a : accounts) {
            List<Change> changes = tail.take(a);
            if (!changes.isEmpty()) {
                inFlight.put(a, changes);
                for (Change ch : changes) {
                    window = ch.id().compareTo(window) < 0 ? ch.id() : window;
                }
            }
        }

        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        c.setReadOnly(true);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        try {
            Map<String, Long> balances = LedgerFigures.balances(c, accounts);
            Map<String, Long> dbHeld = LedgerFigures.held(c, accounts);
            Map<String, Map<String, Long>> dbNamed = LedgerFigures.namedBalances(c, accounts);
            Set<EntryId> persisted = new HashSet<>();
            Map<String, List<Change>> afterSnapshot = new HashMap<>();
            LedgerFigures.persistedSince(c, stream, accounts, window, last, snapshotMs, appended, persisted, afterSnapshot);
            c.commit();
            for (String a : accounts) {
                OptionalLong inRedis = redis.get(a);
                Long db = balances.get(a);
                // The database as of the snapshot: take out what it applied beyond the snapshot's last id.
                boolean exists = db != null;
                long base = db == null ? 0 : db;
                List<Change> after = afterSnapshot.getOrDefault(a, List.of());
                boolean moving = !after.isEmpty();
                if (after.stream().anyMatch(ch -> ch.kind() == EntryKind.OPEN)) {
                    exists = false; // opened after the snapshot
                    base = 0;
                } else {
                    for (Change ch : after) {
                        base -= ch.delta();
                    }
                }
                long pendingSum = 0;
                boolean expectedExists = exists;
                long expected = base;
                for (Change ch : inFlight.getOrDefault(a, List.of())) {
                    if (persisted.contains(ch.id()) || ch.id().compareTo(last) > 0) {
                        continue; // in the database by now, or appended after the balance was read
                    }
                    unpersisted++;
                    moving = true;
                    if (ch.kind() == EntryKind.OPEN) {
                        expectedExists = true;
                        expected = ch.amount();
                        pendingSum += ch.amount();
                    } else {
                        expected += ch.delta();
                        pendingSum += ch.delta();
                    }
                }
                BalanceDrifts.named(a, p, redisNamed.get(a), dbNamed.getOrDefault(a, Map.of()), after,
                        inFlight.getOrDefault(a, List.of()), persisted, last, drifted);
                BalanceDrifts.held(a, p, redisHeld.get(a), dbHeld.get(a), after, inFlight.getOrDefault(a, List.of()), persisted,
                        last, moving, drifted);
                OptionalLong exp = expectedExists ? OptionalLong.of(expected) : OptionalLong.empty();
                if (!exp.equals(inRedis)) {
                    // A merged account's last moves may still be in flight on its former buckets' streams, which this
                    // comparison does not read: the ledger then holds one half of a move. Not drained, so not repaired.
                    boolean inFlightElsewhere = !moving && RecoveryOrder.halfMoves(c, a);
                    drifted.add(new ReconciliationReport.Drift(a, p, inRedis,
                            db == null ? OptionalLong.empty() : OptionalLong.of(db), pendingSum, exp,
                            inRedis.orElse(0) - exp.orElse(0), !moving && !inFlightElsewhere));
                }
            }
        } finally {
            try {
                c.rollback();
                c.setReadOnly(false);
                c.setAutoCommit(auto);
            } catch (SQLException ignored) {
                // read-only work; the pool resets the connection anyway
            }
        }
        return new Result(markerMissing, drifted, unpersisted);
    }

    /**
     * A split account: one snapshot per partition of its buckets, each with that stream's last id, so each
     * partition's share is compared like an account (its balance against the entries of its own stream up to
     * that id). Summed, a move in flight between two snapshots counts on both sides or on neither (its
     * 'moveout' and 'movein' are entries of the two streams). A drift is reported, never repaired here (merge
     * the account first: repair writes the account key).
     *
     * @return the entries counted as not yet persisted
     */
    private long compareSplit(Connection c, int p, String a, int buckets, java.util.function.IntFunction<JournalTail> tails,
                              List<ReconciliationReport.Drift> drifted) throws SQLException {
        Map<Integer, List<Integer>> byPartition = new TreeMap<>();
        for (int i = 0; i < buckets; i++) {
            byPartition.computeIfAbsent(layout.bucketPartition(a, i), k -> new ArrayList<>()).add(i);
        }
        record Share(String stream, EntryId last, long snapshotMs, Set<EntryId> appended, List<Change> inFlight, EntryId window) {
        }
        List<Share> shares = new ArrayList<>();
        long inRedis = 0;
        boolean present = false;
        for (Map.Entry<Integer, List<Integer>> e : byPartition.entrySet()) {
            int q = e.getKey();
            List<Object> reply = bucketSnapshot(q, a, e.getValue());
            EntryId last = EntryId.parse((String) reply.get(1));
            for (int i = 0; i < e.getValue().size(); i++) {
                String b = (String) reply.get(3 + i);
                if (!b.isEmpty()) {
                    inRedis += Long.parseLong(b);
                    present |= e.getValue().get(i) == 0;
                }
            }
            JournalTail tail = tails.apply(q);
            tail.extendTo(last);
            String stream = layout.journal(q);
            List<Change> inFlight = tail.take(a);
            EntryId window = last;
            for (Change ch : inFlight) {
                window = ch.id().compareTo(window) < 0 ? ch.id() : window;
            }
            shares.add(new Share(stream, last, Long.parseLong((String) reply.get(2)), appendedAfter(stream, last), inFlight, window));
        }
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        c.setReadOnly(true);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        try {
            Long db = LedgerFigures.balances(c, List.of(a)).get(a);
            long expected = db == null ? 0 : db;
            long pendingSum = 0;
            long unpersisted = 0;
            boolean moving = false;
            boolean opened = db != null; // or its opening is in flight
            for (Share share : shares) {
                Set<EntryId> persisted = new HashSet<>();
                Map<String, List<Change>> after = new HashMap<>();
                LedgerFigures.persistedSince(c, share.stream(), List.of(a), share.window(), share.last(), share.snapshotMs(),
                        share.appended(), persisted, after);
                for (Change ch : after.getOrDefault(a, List.of())) {
                    expected -= ch.delta();
                    moving = true;
                }
                for (Change ch : share.inFlight()) {
                    if (persisted.contains(ch.id()) || ch.id().compareTo(share.last()) > 0) {
                        continue;
                    }
                    unpersisted++;
                    moving = true;
                    opened |= ch.kind() == EntryKind.OPEN;
                    expected += ch.kind() == EntryKind.OPEN ? ch.amount() : ch.delta();
                    pendingSum += ch.kind() == EntryKind.OPEN ? ch.amount() : ch.delta();
                }
            }
            c.commit();
            if (!present || !opened || expected != inRedis) {
                drifted.add(new ReconciliationReport.Drift(a, p, present ? OptionalLong.of(inRedis) : OptionalLong.empty(),
                        db == null ? OptionalLong.empty() : OptionalLong.of(db), pendingSum, OptionalLong.of(expected),
                        inRedis - expected, false));
            }
            return unpersisted;
        } finally {
            try {
                c.rollback();
                c.setReadOnly(false);
                c.setAutoCommit(auto);
            } catch (SQLException ignored) {
                // read-only work; the pool resets the connection anyway
            }
        }
    }

    private List<Object> bucketSnapshot(int q, String a, List<Integer> indices) {
        String[] keys = new String[2 + indices.size()];
        String[] args = new String[2 + indices.size()];
        keys[0] = layout.marker(q);
        keys[1] = layout.journal(q);
        args[0] = layout.markerValue();
        args[1] = a;
        for (int i = 0; i < indices.size(); i++) {
            keys[2 + i] = layout.bucketKey(a, indices.get(i));
            args[2 + i] = Integer.toString(indices.get(i));
        }
        List<Object> reply = run(LedgerScripts.BUCKET_SNAPSHOT, keys, args, q);
        if (reply.size() != 3 + indices.size()) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected bucket snapshot reply " + reply);
        }
        return reply;
    }

    private List<Object> run(dev.warden.redis.internal.RedisScript script, String[] keys, String[] args, int p) {
        try {
            return streams.scripts().run(script, keys, args).get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while reading partition " + p, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis did not answer reading partition " + p + " in time", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r
                    : new QuotaException(Reason.UNAVAILABLE, "Redis failed reading partition " + p, e.getCause());
        }
    }

    /** Ids appended after the snapshot's last id (read right after it; trimming may remove some, the time rule covers them). */
    private Set<EntryId> appendedAfter(String stream, EntryId last) {
        Set<EntryId> ids = new HashSet<>();
        String start = "(" + last;
        while (true) {
            JournalStreams.Page page = streams.from(stream, start, PAGE);
            for (StreamMessage<String, String> m : page.entries()) {
                ids.add(EntryId.parse(m.getId()));
                start = "(" + m.getId();
            }
            if (!page.more()) {
                return ids;
            }
        }
    }

    private List<Object> snapshot(int p, List<String> accounts) {
        String[] keys = new String[2 + 2 * accounts.size()];
        String[] args = new String[1 + accounts.size()];
        keys[0] = layout.marker(p);
        keys[1] = layout.journal(p);
        args[0] = layout.markerValue();
        for (int i = 0; i < accounts.size(); i++) {
            keys[2 + i] = layout.accountKey(accounts.get(i));
            keys[2 + accounts.size() + i] = layout.balancesKey(accounts.get(i));
            args[1 + i] = accounts.get(i);
        }
        List<Object> reply;
        try {
            reply = streams.scripts().run(LedgerScripts.SNAPSHOT, keys, args).get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while reading partition " + p, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis did not answer reading partition " + p + " in time", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r
                    : new QuotaException(Reason.UNAVAILABLE, "Redis failed reading partition " + p, e.getCause());
        }
        if (reply.size() != 3 + 4 * accounts.size() || "invalid_argument".equals(reply.get(0))) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected snapshot reply " + reply);
        }
        return reply;
    }
}
