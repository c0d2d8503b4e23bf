package dev.warden.quota.ledger.journal;

import dev.warden.quota.EntryKind;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A compensation Redis refused (see {@link Compensation}): a replayed top-up or refund whose money was spent
 * before the ledger could take it back. Redis and the ledger both hold the replay, agree, and are wrong by
 * its amount; {@link dev.warden.quota.ledger.reconcile.ReconciliationReport#clean()} stays false and {@link dev.warden.quota.ledger.Reconciler#repair} refuses until a
 * person resolves it ({@link dev.warden.quota.ledger.Ledger#resolveCompensation}), for example by charging the amount through the
 * normal path, or by writing it off.
 *
 * @param stream                the replay's journal stream
 * @param entryId               the replay's entry id there
 * @param account               the account
 * @param replayKind            what was replayed (a top-up or refund; a deduction's compensation, a refund, is never refused)
 * @param amount                the replay's amount
 * @param requestId             the replayed request id
 * @param compensationRequestId the compensation's request id
 * @param outcome               what Redis answered (e.g. {@code INSUFFICIENT})
 * @param recordedAt            when the ledger applied the replay
 * @param resolvedAt            when a person resolved it, if they did
 */
public record RefusedCompensation(String stream, String entryId, String account, EntryKind replayKind, long amount,
                                  String requestId, String compensationRequestId, String outcome, Instant recordedAt,
                                  Optional<Instant> resolvedAt) {

    public RefusedCompensation {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(entryId, "entryId");
        Objects.requireNonNull(resolvedAt, "resolvedAt");
    }
}
