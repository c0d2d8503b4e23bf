package dev.warden.reactor;

import dev.warden.lock.Lease;
import dev.warden.quota.Deduction;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.Outcome;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.concurrent.Callable;

/**
 * A {@link QuotaService} for Project Reactor: each operation as a cold {@link Mono} that calls the service when
 * subscribed, once per subscription. Needs {@code quota-core} on the class path (an optional dependency of this
 * module).
 *
 * <p><b>Where each call runs.</b> The deductions ({@link #deduct(String, long, String)} and its fenced form) use
 * the service's asynchronous API and block no thread; they complete on a Warden thread. Every other operation is
 * blocking in {@link QuotaService} (one or more Redis round trips, and for {@link #charge} and
 * {@link #chargeHold} the account's lock), so it runs on {@link Schedulers#boundedElastic()} (or the scheduler
 * given to {@link #of(QuotaService, Scheduler)}) and completes there; {@link #charge}'s {@link Pricing} runs on
 * that thread too.
 *
 * <p><b>Cancelling does not undo.</b> A call that has started runs to its end on the server (a script that was
 * sent applies); only its answer is dropped. Every change is idempotent per (account, request id): retry with
 * the same request id to learn what happened.
 *
 * <p>Failures are the service's own ({@code QuotaException}, {@code InvalidIdException}, ...), signalled as
 * errors, also for invalid arguments the service rejects before sending anything. Thread-safe.
 */
public final class ReactiveQuota {

    private final QuotaService quota;
    private final Scheduler blocking;

    private ReactiveQuota(QuotaService quota, Scheduler blocking) {
        this.quota = quota;
        this.blocking = blocking;
    }

    /** The reactive view of {@code quota}; its blocking operations run on {@link Schedulers#boundedElastic()}. */
    public static ReactiveQuota of(QuotaService quota) {
        return of(quota, Schedulers.boundedElastic());
    }

    /** The reactive view of {@code quota}; its blocking operations run on {@code blocking}, a scheduler that may block. */
    public static ReactiveQuota of(QuotaService quota, Scheduler blocking) {
        return new ReactiveQuota(Objects.requireNonNull(quota, "quota"), Objects.requireNonNull(blocking, "blocking"));
    }

    /** The service behind this view (closing it is its owner's business, not this view's). */
    public QuotaService service() {
        return quota;
    }

    /** {@link QuotaService#open(String, long)}. */
    public Mono<Outcome> open(String account, long initialQuota) {
        return blocking(() -> quota.open(account, initialQuota));
    }

    /** {@link QuotaService#open(String, long, int)}. */
    public Mono<Outcome> open(String account, long initialQuota, int buckets) {
        return blocking(() -> quota.open(account, initialQuota, buckets));
    }

    /** {@link QuotaService#topUp}. */
    public Mono<Outcome> topUp(String account, long amount, String requestId) {
        return blocking(() -> quota.topUp(account, amount, requestId));
    }

    /** {@link QuotaService#refund}. */
    public Mono<Outcome> refund(String account, long amount, String requestId) {
        return blocking(() -> quota.refund(account, amount, requestId));
    }

    /** {@link QuotaService#deductAsync(String, long, String)}: blocks no thread. */
    public Mono<Outcome> deduct(String account, long amount, String requestId) {
        return Mono.fromCompletionStage(() -> quota.deductAsync(account, amount, requestId));
    }

    /**
     * {@link QuotaService#deductAsync(String, long, String, Lease)}: fenced with the lease's token, blocks no
     * thread. With {@link ReactiveLock#withLockMono} on {@link #lockName(String) the account's lock}:
     * {@code lock.withLockMono(lease -> quota.deduct(account, amount, requestId, lease))}.
     */
    public Mono<Outcome> deduct(String account, long amount, String requestId, Lease lease) {
        return Mono.fromCompletionStage(() -> quota.deductAsync(account, amount, requestId, lease));
    }

    /** {@link QuotaService#deductAll}. */
    public Mono<List<Outcome>> deductAll(List<Deduction> deductions) {
        return blocking(() -> quota.deductAll(deductions));
    }

    /** {@link QuotaService#balance}: the balance, or empty when there is no such account. */
    public Mono<Long> balance(String account) {
        return blocking(() -> {
            OptionalLong balance = quota.balance(account);
            return balance.isPresent() ? balance.getAsLong() : null;
        });
    }

    /** {@link QuotaService#charge}: {@code pricing} runs on the blocking scheduler (under the account's lock when one is configured). */
    public Mono<Outcome> charge(String account, String requestId, Pricing pricing) {
        return blocking(() -> quota.charge(account, requestId, pricing));
    }

    /** {@link QuotaService#hold}. */
    public Mono<HoldOutcome> hold(String account, long amount, String holdId, Duration expiry) {
        return blocking(() -> quota.hold(account, amount, holdId, expiry));
    }

    /** {@link QuotaService#capture}. */
    public Mono<HoldOutcome> capture(String account, String holdId, long amount) {
        return blocking(() -> quota.capture(account, holdId, amount));
    }

    /** {@link QuotaService#release(String, String)}: voids a hold. */
    public Mono<HoldOutcome> release(String account, String holdId) {
        return blocking(() -> quota.release(account, holdId));
    }

    /** {@link QuotaService#chargeHold}: {@code pricing} runs on the blocking scheduler (under the account's lock when one is configured). */
    public Mono<HoldOutcome> chargeHold(String account, String holdId, Pricing pricing) {
        return blocking(() -> quota.chargeHold(account, holdId, pricing));
    }

    /** {@link QuotaService#expireHolds}: how many holds it expired. */
    public Mono<Long> expireHolds() {
        return blocking(quota::expireHolds);
    }

    /** {@link QuotaService#openBalance}. */
    public Mono<PostingOutcome> openBalance(String account, String balance) {
        return blocking(() -> quota.openBalance(account, balance));
    }

    /** {@link QuotaService#post}. */
    public Mono<PostingOutcome> post(String account, String requestId, Map<String, Long> deltas) {
        return blocking(() -> quota.post(account, requestId, deltas));
    }

    /** {@link QuotaService#balances}: the named balances, or empty when there is no such account. */
    public Mono<SortedMap<String, Long>> balances(String account) {
        return blocking(() -> quota.balances(account).orElse(null));
    }

    /** {@link QuotaService#split}. */
    public Mono<SplitOutcome> split(String account, int buckets) {
        return blocking(() -> quota.split(account, buckets));
    }

    /** {@link QuotaService#merge}. */
    public Mono<SplitOutcome> merge(String account) {
        return blocking(() -> quota.merge(account));
    }

    /** {@link QuotaService#lockName}: the account's lock name, {@code quota:<account>} (no call, no {@link Mono}). */
    public String lockName(String account) {
        return quota.lockName(account);
    }

    /** Calls {@code call} on the blocking scheduler when subscribed; a null answer completes empty. */
    private <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(blocking);
    }

    @Override
    public String toString() {
        return "ReactiveQuota[" + quota + "]";
    }
}
