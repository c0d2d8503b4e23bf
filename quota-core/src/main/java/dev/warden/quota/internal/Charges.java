package dev.warden.quota.internal;

import dev.warden.lock.Lease;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaService;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Charges, priced and applied under {@link AccountLocks}' policy: {@code charge} prices the balance and
 * deducts the price (a retry answers as its first try did, never priced again), alone or, with
 * {@code warden.quota.combine-charges}, combined with the account's other charges in this engine
 * ({@link CombinedCharges}); {@code chargeAsync} does the same on a charge thread ({@link ChargeThreads}), or, combined,
 * queues with the account's other charges; {@code chargeHold} prices a hold and captures it. Arguments are checked by the caller; a charge reads the balance and deducts through
 * the service, so the lease the lock gave is checked as any caller's is.
 *
 * <p>Thread-safe: immutable.
 */
final class Charges {

    private final QuotaService service;
    private final AccountLocks locks;
    private final Deductions deductions;
    private final Holds holds;
    private final long syncWaitNanos;
    private final String endpoint;
    /** Null unless {@code warden.quota.combine-charges} is on. */
    private final CombinedCharges combined;

    private final ChargeThreads threads;
    private final Executor completions;

    /**
     * @param threads     where {@code chargeAsync} runs (closed by the service)
     * @param completions where {@code chargeAsync}'s stages complete
     */
    Charges(QuotaService service, AccountLocks locks, Deductions deductions, Holds holds, long syncWaitNanos,
            String endpoint, boolean combine, ChargeThreads threads, Executor completions) {
        this.service = service;
        this.threads = threads;
        this.completions = completions;
        this.locks = locks;
        this.deductions = deductions;
        this.holds = holds;
        this.syncWaitNanos = syncWaitNanos;
        this.endpoint = endpoint;
        this.combined = combine ? new CombinedCharges(locks, new CombinedRound(deductions, service::balance, this::alone,
                syncWaitNanos, endpoint), threads, completions) : null;
    }

    Outcome charge(String account, String requestId, Pricing pricing) {
        if (combined != null) {
            return combined.charge(account, requestId, pricing);
        }
        return locks.underLock(account, requestId, lease -> alone(account, requestId, pricing, lease),
                () -> alone(account, requestId, pricing, null));
    }

    /** {@link #charge} on a charge thread; the stage completes on {@code completions}. */
    CompletableFuture<Outcome> chargeAsync(String account, String requestId, Pricing pricing) {
        if (combined != null) {
            return combined.chargeAsync(account, requestId, pricing);
        }
        CompletableFuture<Outcome> answer = new CompletableFuture<>();
        threads.execute(new ChargeThreads.Task() {
            @Override
            public void run() {
                Object a;
                try {
                    a = charge(account, requestId, pricing);
                } catch (Throwable e) {
                    a = e; // the stage fails with it, whatever it is: never left incomplete
                }
                QueuedCharge.complete(answer, a, completions);
            }

            @Override
            public void abandon() {
                QueuedCharge.complete(answer, CombinedCharges.closedBeforeSent(account), completions);
            }
        });
        return answer;
    }

    /** One charge: read its record and the balance, price, deduct (fenced by {@code lease}; unfenced when null). */
    private Outcome alone(String account, String requestId, Pricing pricing, Lease lease) {
        // Both reads on the wire at once: one round trip where two went one after the other.
        Deductions.RecordRead record = deductions.sendRecordRead(account, requestId);
        OptionalLong balance = service.balance(account);
        if (balance.isEmpty()) {
            record.reply().cancel(false);
            return new Outcome.AccountNotFound(account);
        }
        Optional<Outcome> recorded = deductions.recorded(record);
        if (recorded.isPresent()) {
            return recorded.get(); // a retry: its first answer, not a second price
        }
        long price = pricing.price(balance.getAsLong());
        return lease == null ? service.deduct(account, price, requestId) : service.deduct(account, price, requestId, lease);
    }

    HoldOutcome chargeHold(String account, String holdId, Pricing pricing) {
        // The hold's one-way state (held -> captured) guards the money; the lock orders pricing and capture.
        Supplier<HoldOutcome> charge = () -> {
            // Priced on the caller's thread, never on the connection's event loop.
            Holds.Either amount = holds.amountToCapture(account, holdId, pricing, syncWaitNanos, endpoint);
            if (amount.ended() != null) {
                return amount.ended();
            }
            return Errors.await(holds.capture(account, holdId, amount.amount()), syncWaitNanos, endpoint,
                    "capture a hold of " + account);
        };
        return locks.underLock(account, holdId, lease -> charge.get(), charge);
    }
}
