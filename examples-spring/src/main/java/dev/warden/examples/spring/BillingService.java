package dev.warden.examples.spring;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.spring.CurrentLease;
import dev.warden.spring.WithLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The seed's multi-step charge: price from the balance, then deduct, under the merchant's lock. The lock
 * name is the quota service's lock name of the account ({@code quota:<merchant>}), so the deduction can
 * carry the lease: the Lua script refuses a token lower than one the account has seen.
 */
@Service
public class BillingService {

    private final QuotaService quota;
    private final int settlementSteps;
    private final Duration settlementStep;

    public BillingService(QuotaService quota, @Value("${billing.settlement.steps:10}") int settlementSteps,
                          @Value("${billing.settlement.step:200ms}") Duration settlementStep) {
        this.quota = quota;
        this.settlementSteps = settlementSteps;
        this.settlementStep = settlementStep;
    }

    public Outcome open(String merchantId, long quotaMinorUnits) {
        return quota.open(merchantId, quotaMinorUnits);
    }

    public OptionalLong balance(String merchantId) {
        return quota.balance(merchantId);
    }

    /** Prices the order at {@code percent}% of the balance (at least 1) and deducts it, fenced. */
    @WithLock(name = "'quota:' + #merchantId", waitFor = "${billing.lock-wait:2s}")
    public Receipt charge(String merchantId, String orderId, int percent) {
        Lease lease = CurrentLease.get();
        long before = quota.balance(merchantId).orElseThrow(() -> new UnknownMerchantException(merchantId));
        long amount = Math.max(1, before * percent / 100);
        Outcome outcome = quota.deduct(merchantId, amount, orderId, lease);
        long after = outcome instanceof Outcome.Applied applied ? applied.balance() : before;
        return new Receipt(merchantId, orderId, lease.fencingToken(), before, amount, outcome.status().name(), after);
    }

    /**
     * A long job under the merchant's lock, kept alive by the lease keeper. Between steps it checks the lease;
     * when the lease is lost (its key deleted, the server gone past the TTL) it stops at once rather than
     * carry on unprotected, and says why.
     */
    @WithLock(name = "'quota:' + #merchantId", waitFor = "${billing.lock-wait:2s}")
    public Settlement settle(String merchantId) {
        Lease lease = CurrentLease.get();
        CompletableFuture<LeaseLost> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        int done = 0;
        while (done < settlementSteps) {
            try {
                // One step of work; a loss ends the wait at once.
                LeaseLost event = lost.get(settlementStep.toMillis(), TimeUnit.MILLISECONDS);
                return new Settlement(merchantId, lease.fencingToken(), done, settlementSteps, event.reason().name());
            } catch (TimeoutException stepDone) {
                done++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            }
        }
        return new Settlement(merchantId, lease.fencingToken(), done, settlementSteps,
                lease.isValid() ? null : lost.getNow(null) == null ? "UNKNOWN" : lost.getNow(null).reason().name());
    }

    /** No such merchant. */
    public static final class UnknownMerchantException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnknownMerchantException(String merchantId) {
            super("no merchant " + merchantId);
        }
    }
}
