package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.internal.store.CompensationRows;
import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.ledger.journal.JournalEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Undoes in Redis what a replay did there: a request id that reached Redis again after its
 * idempotency record expired was applied twice in Redis and once in the database, so Redis gets the
 * opposite entry under a request id derived from the journal entry, and the database records how
 * that went. Logs as the consumer. Thread-safe: immutable.
 */
public final class Compensations {

    private static final Logger log = LoggerFactory.getLogger(Logs.CONSUMER);

    private final DataSource dataSource;
    private final QuotaService quota;
    private final LedgerListener listener;

    Compensations(DataSource dataSource, QuotaService quota, LedgerListener listener) {
        this.dataSource = dataSource;
        this.quota = quota;
        this.listener = listener;
    }

    /**
     * Undoes a replay in Redis under a derived request id. Throws when Redis is unavailable: the batch
     * then stays unacknowledged, and the redelivery compensates again (idempotent by that request id).
     */
    void compensate(String stream, BatchStep s) {
        JournalEntry e = s.entry;
        String requestId = s.compensationRequestId();
        Outcome outcome = s.compensationKind() == EntryKind.REFUND
                ? quota.refund(e.account(), e.amount(), requestId)
                : quota.deduct(e.account(), e.amount(), requestId);
        String status = outcome.status().name();
        if (outcome.isApplied()) {
            log.warn("ledger: request id '{}' of account {} reached Redis again after its idempotency record expired"
                    + " (entry {}); compensated with a {} of {} as '{}'", e.requestId(), e.account(), e.entryId(),
                    s.compensationKind().wireName(), e.amount(), requestId);
        } else {
            log.error("ledger: could not compensate the replay of request id '{}' of account {} (entry {}): Redis"
                    + " answered {}; both sides hold the replay, and reconciliation reports it as an unresolved refused"
                    + " compensation until a person resolves it ('ledger compensations')", e.requestId(), e.account(),
                    e.entryId(), outcome);
        }
        try (Connection c = dataSource.getConnection()) {
            CompensationRows.recordOutcome(c, stream, s.position, status);
        } catch (SQLException | RuntimeException ex) {
            log.warn("ledger: could not record the outcome {} of compensation {} (its journal entry records it)", status,
                    requestId, ex);
        }
        Compensation compensation = new Compensation(e, requestId, s.compensationKind(), status);
        notify(() -> listener.compensated(compensation));
    }

    private void notify(Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException e) {
            log.warn("a ledger listener failed", e);
        }
    }
}
