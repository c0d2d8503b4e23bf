package dev.warden.micrometer;

import dev.warden.lock.Lease;
import dev.warden.quota.Deduction;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * A {@link QuotaService} that meters every call of the one it wraps (quota-core has no listener hook
 * for outcomes, so the meters sit at its public interface), and observes deductions and charges.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><td>{@value #OUTCOMES} (counter, {@code operation}, {@code outcome})</td><td>outcomes by type:
 *       {@code applied}, {@code duplicate}, {@code conflict}, {@code insufficient}, {@code account_not_found},
 *       {@code invalid_amount}, {@code stale_fence}, {@code account_exists}; each deduction of a batch counts</td></tr>
 *   <tr><td>{@value #FAILURES} (counter, {@code operation}, {@code reason})</td><td>calls that threw: the
 *       {@link QuotaException.Reason} ({@code unavailable}, {@code lock_timeout}, ...), {@code invalid_id}, or
 *       {@code other}</td></tr>
 *   <tr><td>{@value #LATENCY} (timer, {@code operation})</td><td>every call, failures included; a batch is one sample</td></tr>
 * </table>
 * Operations: {@code open}, {@code top_up}, {@code refund}, {@code deduct} (with or without a lease,
 * blocking or not), {@code deduct_all}, {@code balance}, {@code charge} (blocking or not).
 *
 * <p>Observations: {@value #DEDUCT_OBSERVATION} and {@value #CHARGE_OBSERVATION}, with the low-cardinality key
 * {@code outcome} (as above, or {@code failed}) and the high-cardinality key {@code account}. They feed
 * tracing; with a meter handler they are timers too, under their own names.
 *
 * <p>Thread-safe as the wrapped service is. Closing it closes the wrapped service.
 */
public final class MeteredQuotaService implements QuotaService {

    public static final String OUTCOMES = "warden.quota.outcomes";
    public static final String FAILURES = "warden.quota.failures";
    public static final String LATENCY = "warden.quota.latency";
    public static final String DEDUCT_OBSERVATION = "warden.quota.deduction";
    public static final String CHARGE_OBSERVATION = "warden.quota.charge";

    private final QuotaService delegate;
    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final Tags tags;

    public MeteredQuotaService(QuotaService delegate, MeterRegistry meters, ObservationRegistry observations,
                               Iterable<Tag> tags) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.meters = Objects.requireNonNull(meters, "meters");
        this.observations = Objects.requireNonNull(observations, "observations");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    /** Meters only; observations go nowhere. */
    public MeteredQuotaService(QuotaService delegate, MeterRegistry meters) {
        this(delegate, meters, ObservationRegistry.NOOP, Tags.empty());
    }

    /** The service this one meters. */
    public QuotaService delegate() {
        return delegate;
    }

    @Override
    public Outcome open(String account, long initialQuota) {
        return timed("open", () -> delegate.open(account, initialQuota));
    }

    @Override
    public Outcome open(String account, long initialQuota, int buckets) {
        // The delegate checks the bucket count before it opens anything: the interface's default would open first.
        return timed("open", () -> delegate.open(account, initialQuota, buckets));
    }

    @Override
    public Outcome topUp(String account, long amount, String requestId) {
        return timed("top_up", () -> delegate.topUp(account, amount, requestId));
    }

    @Override
    public Outcome refund(String account, long amount, String requestId) {
        return timed("refund", () -> delegate.refund(account, amount, requestId));
    }

    @Override
    public Outcome deduct(String account, long amount, String requestId) {
        return observed(DEDUCT_OBSERVATION, account, () -> timed("deduct", () -> delegate.deduct(account, amount, requestId)));
    }

    @Override
    public Outcome deduct(String account, long amount, String requestId, Lease lease) {
        return observed(DEDUCT_OBSERVATION, account,
                () -> timed("deduct", () -> delegate.deduct(account, amount, requestId, lease)));
    }

    @Override
    public CompletionStage<Outcome> deductAsync(String account, long amount, String requestId) {
        return timedAsync("deduct", DEDUCT_OBSERVATION, account, () -> delegate.deductAsync(account, amount, requestId));
    }

    @Override
    public CompletionStage<Outcome> deductAsync(String account, long amount, String requestId, Lease lease) {
        return timedAsync("deduct", DEDUCT_OBSERVATION, account, () -> delegate.deductAsync(account, amount, requestId, lease));
    }

    @Override
    public List<Outcome> deductAll(List<Deduction> deductions) {
        long start = meters.config().clock().monotonicTime();
        try {
            List<Outcome> outcomes = delegate.deductAll(deductions);
            outcomes.forEach(o -> outcome("deduct_all", o));
            return outcomes;
        } catch (RuntimeException e) {
            failure("deduct_all", e);
            throw e;
        } finally {
            latency("deduct_all", start);
        }
    }

    @Override
    public OptionalLong balance(String account) {
        long start = meters.config().clock().monotonicTime();
        try {
            return delegate.balance(account);
        } catch (RuntimeException e) {
            failure("balance", e);
            throw e;
        } finally {
            latency("balance", start);
        }
    }

    @Override
    public Outcome charge(String account, String requestId, Pricing pricing) {
        return observed(CHARGE_OBSERVATION, account, () -> timed("charge", () -> delegate.charge(account, requestId, pricing)));
    }

    @Override
    public CompletionStage<Outcome> chargeAsync(String account, String requestId, Pricing pricing) {
        return timedAsync("charge", CHARGE_OBSERVATION, account, () -> delegate.chargeAsync(account, requestId, pricing));
    }

    @Override
    public HoldOutcome hold(String account, long amount, String holdId, java.time.Duration expiry) {
        return delegate.hold(account, amount, holdId, expiry); // holds are not metered yet
    }

    @Override
    public HoldOutcome capture(String account, String holdId, long amount) {
        return delegate.capture(account, holdId, amount);
    }

    @Override
    public HoldOutcome release(String account, String holdId) {
        return delegate.release(account, holdId);
    }

    @Override
    public HoldOutcome chargeHold(String account, String holdId, Pricing pricing) {
        return delegate.chargeHold(account, holdId, pricing);
    }

    @Override
    public dev.warden.quota.PostingOutcome openBalance(String account, String balance) {
        return delegate.openBalance(account, balance); // named balances are not metered yet
    }

    @Override
    public dev.warden.quota.PostingOutcome post(String account, String requestId, java.util.Map<String, Long> deltas) {
        return delegate.post(account, requestId, deltas);
    }

    @Override
    public java.util.Optional<java.util.SortedMap<String, Long>> balances(String account) {
        return delegate.balances(account);
    }

    @Override
    public long expireHolds() {
        return delegate.expireHolds();
    }

    @Override
    public dev.warden.quota.SplitOutcome split(String account, int buckets) {
        return delegate.split(account, buckets); // a split account's deductions are metered like any other
    }

    @Override
    public dev.warden.quota.SplitOutcome merge(String account) {
        return delegate.merge(account);
    }

    @Override
    public String lockName(String account) {
        return delegate.lockName(account);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "Metered" + delegate;
    }

    private Outcome timed(String operation, Supplier<Outcome> call) {
        long start = meters.config().clock().monotonicTime();
        try {
            Outcome outcome = call.get();
            outcome(operation, outcome);
            return outcome;
        } catch (RuntimeException e) {
            failure(operation, e);
            throw e;
        } finally {
            latency(operation, start);
        }
    }

    private CompletionStage<Outcome> timedAsync(String operation, String observationName, String account, Supplier<CompletionStage<Outcome>> call) {
        long start = meters.config().clock().monotonicTime();
        Observation observation = startObservation(observationName, account);
        CompletionStage<Outcome> stage;
        try {
            stage = call.get();
        } catch (RuntimeException e) {
            failure(operation, e);
            latency(operation, start);
            stopObservation(observation, null, e);
            throw e;
        }
        return stage.whenComplete((outcome, error) -> {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause != null) {
                failure(operation, cause);
            } else {
                outcome(operation, outcome);
            }
            latency(operation, start);
            stopObservation(observation, outcome, cause);
        });
    }

    private Outcome observed(String name, String account, Supplier<Outcome> call) {
        Observation observation = startObservation(name, account);
        Outcome outcome = null;
        RuntimeException error = null;
        try (Observation.Scope ignored = observation.openScope()) {
            outcome = call.get();
            return outcome;
        } catch (RuntimeException e) {
            error = e;
            throw e;
        } finally {
            stopObservation(observation, outcome, error);
        }
    }

    private Observation startObservation(String name, String account) {
        return Observation.createNotStarted(name, observations)
                .contextualName(name.equals(CHARGE_OBSERVATION) ? "quota charge" : "quota deduct")
                .highCardinalityKeyValue("account", String.valueOf(account))
                .start();
    }

    private static void stopObservation(Observation observation, Outcome outcome, Throwable error) {
        if (error != null) {
            observation.lowCardinalityKeyValue("outcome", "failed");
            observation.error(error);
        } else {
            observation.lowCardinalityKeyValue("outcome", MicrometerLockObserver.tagValue(outcome.status()));
        }
        observation.stop();
    }

    private void outcome(String operation, Outcome outcome) {
        Counter.builder(OUTCOMES)
                .description("Quota outcomes by operation and type")
                .tags(tags)
                .tag("operation", operation)
                .tag("outcome", MicrometerLockObserver.tagValue(outcome.status()))
                .register(meters)
                .increment();
    }

    private void failure(String operation, Throwable error) {
        String reason;
        if (error instanceof QuotaException q) {
            reason = q.reason().name().toLowerCase(Locale.ROOT);
        } else if (error instanceof InvalidIdException) {
            reason = "invalid_id";
        } else {
            reason = "other";
        }
        Counter.builder(FAILURES)
                .description("Quota calls that threw, by reason")
                .tags(tags)
                .tag("operation", operation)
                .tag("reason", reason)
                .register(meters)
                .increment();
    }

    private void latency(String operation, long startNanos) {
        Timer.builder(LATENCY)
                .description("Quota call latency, failures included")
                .tags(tags)
                .tag("operation", operation)
                .register(meters)
                .record(meters.config().clock().monotonicTime() - startNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }
}
