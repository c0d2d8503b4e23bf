package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.consume.BatchStep.Action;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.journal.QuarantineReason;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Decides what becomes of each entry of a batch before anything is written, from what the ledger
 * already holds (by (account, request id), and by position among the compensated and quarantined)
 * and what came earlier in the same batch. Two queries per batch, whatever its size, or one when the
 * entries are fresh from the stream and the table's key is left to find the rare one it already holds.
 */
public final class BatchClassifier {

    private final LedgerSql sql;

    BatchClassifier(LedgerSql sql) {
        this.sql = sql;
    }

    /**
     * The batches' steps in order, each with its action: new, a redelivery, a replay to compensate (or
     * compensated already), refused (malformed, a second hold or move entry, a reused posting id, an
     * account opened twice) or quarantined already.
     *
     * @param lookUpKeys whether to ask the ledger which keys it holds; without, the steps assume it holds
     *                   none of them, which the table's key then checks: an insert of a key it holds fails
     *                   (SQLSTATE 23505), and the writer classifies again with the lookup
     */
    List<BatchStep> classify(Connection c, List<BatchWriter.Part> parts, boolean lookUpKeys) throws SQLException {
        List<BatchStep> steps = new ArrayList<>();
        for (BatchWriter.Part part : parts) {
            for (BatchWriter.Raw raw : part.raws()) {
                steps.add(parse(part, raw));
            }
        }
        Map<JournalEntry.Key, LedgerSql.Position> known = lookUpKeys ? knownKeys(c, steps) : Map.of();
        Set<LedgerSql.Position> compensated = new HashSet<>();
        Set<LedgerSql.Position> quarantined = new HashSet<>();
        positions(c, steps, compensated, quarantined);
        Map<JournalEntry.Key, LedgerSql.Position> inBatch = new HashMap<>();
        for (BatchStep s : steps) {
            LedgerSql.Position here = new LedgerSql.Position(s.part.stream(), s.position);
            if (quarantined.contains(here)) {
                s.action = Action.ALREADY_QUARANTINED;
                continue;
            }
            if (s.action == Action.QUARANTINE) {
                continue;
            }
            if (compensated.contains(here)) {
                s.action = Action.COMPENSATE_AGAIN;
                continue;
            }
            JournalEntry.Key key = s.entry.key();
            LedgerSql.Position first = known.containsKey(key) ? known.get(key) : inBatch.get(key);
            if (first == null) {
                s.action = Action.APPLY;
                inBatch.put(key, here);
            } else if (first.equals(here) && known.containsKey(key)) {
                s.action = Action.REDELIVERED;
            } else if (s.entry.ofHold()) {
                // Redis ends a hold once; a second entry of a kind means its record expired and the id was reused.
                s.quarantine(QuarantineReason.CONSTRAINT, "a second " + s.entry.kind().wireName() + " entry of hold '"
                        + s.entry.requestId().substring(s.entry.kind().wireName().length() + 1) + "' of account '"
                        + s.entry.account() + "' (the ledger holds one as entry " + first.id() + " of " + first.stream()
                        + "): the hold id was reused after its record expired");
            } else if (s.entry.ofMove()) {
                // Redis gives a move once (its record in the target's slot outlives the move).
                s.quarantine(QuarantineReason.CONSTRAINT, "a second " + s.entry.kind().wireName() + " entry of move '"
                        + s.entry.requestId() + "' of account '" + s.entry.account() + "' (the ledger holds one as entry "
                        + first.id() + " of " + first.stream() + ")");
            } else if (s.entry.kind() == EntryKind.POST) {
                // A posting moves several balances: no single compensation undoes it, so a human decides.
                s.quarantine(QuarantineReason.CONSTRAINT, "a second entry for request id '" + s.entry.requestId()
                        + "' of account '" + s.entry.account() + "', a posting (the ledger holds one as entry " + first.id()
                        + " of " + first.stream() + "): the request id was reused after its record expired");
            } else if (s.entry.kind() == EntryKind.OPEN) {
                s.quarantine(QuarantineReason.ACCOUNT_EXISTS, "account '" + s.entry.account() + "' was opened again"
                        + " (the ledger holds its opening as entry " + first.id() + " of " + first.stream()
                        + "): Redis lost it and it was reopened");
            } else {
                s.action = Action.COMPENSATE;
            }
        }
        return steps;
    }

    private static BatchStep parse(BatchWriter.Part part, BatchWriter.Raw raw) {
        EntryId position;
        try {
            position = EntryId.parse(raw.id());
        } catch (IllegalArgumentException e) {
            position = EntryId.ZERO;
        }
        try {
            if (position.equals(EntryId.ZERO)) {
                throw new IllegalArgumentException("not a stream entry id: " + raw.id());
            }
            return new BatchStep(part, raw, position, JournalEntry.decode(part.partition(), part.stream(), raw.id(), raw.fields()));
        } catch (IllegalArgumentException e) {
            BatchStep s = new BatchStep(part, raw, position, null);
            s.quarantine(QuarantineReason.MALFORMED, String.valueOf(e.getMessage()));
            return s;
        }
    }

    private Map<JournalEntry.Key, LedgerSql.Position> knownKeys(Connection c, List<BatchStep> steps) throws SQLException {
        List<JournalEntry.Key> keys = new ArrayList<>();
        for (BatchStep s : steps) {
            if (s.entry != null) {
                keys.add(s.entry.key());
            }
        }
        return sql.knownKeys(c, keys);
    }

    /** Positions of the batches' ranges already recorded as compensated or quarantined (an earlier attempt). */
    private void positions(Connection c, List<BatchStep> steps, Set<LedgerSql.Position> compensated,
                           Set<LedgerSql.Position> quarantined) throws SQLException {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        Set<String> streams = new TreeSet<>();
        BatchWriter.Part last = null;
        for (BatchStep s : steps) {
            min = Math.min(min, s.position.ms());
            max = Math.max(max, s.position.ms());
            if (s.part != last) { // the steps come part by part
                streams.add(s.part.stream());
                last = s.part;
            }
        }
        if (!streams.isEmpty()) {
            sql.positions(c, streams, min, max, compensated, quarantined);
        }
    }
}
