package dev.warden.micrometer;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.Semaphore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Acquisitions as Micrometer observations (a span with a tracer, a timer with a meter handler):
 * {@value #ACQUISITION}, with the low-cardinality key {@code outcome} ({@code acquired}, {@code timeout},
 * {@code failed}) and the high-cardinality keys {@code lock.name} and {@code lock.fencing-token}, which
 * reach spans but never meters. The {@code @WithLock} annotation of the Spring Boot starter acquires
 * through here.
 *
 * <p>{@link MicrometerLockObserver} times the wait of every grant; this also sees the waits that ran
 * out and the failures, and puts the acquisition in the caller's trace.
 */
public final class LockObservations {

    public static final String ACQUISITION = "warden.lock.acquisition";

    private final ObservationRegistry registry;

    public LockObservations(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** {@link DistributedLock#tryAcquire(Duration)}, observed. */
    public Optional<Lease> tryAcquire(DistributedLock lock, Duration wait) {
        return observe(lock.name(), () -> lock.tryAcquire(wait));
    }

    /** {@link DistributedLock#acquire()}, observed. */
    public Lease acquire(DistributedLock lock) {
        return observe(lock.name(), () -> Optional.of(lock.acquire())).orElseThrow();
    }

    /** {@link Semaphore#tryAcquire(int, Duration)}, observed; {@code lock.name} is {@code semaphore:<name>}. */
    public Optional<Lease> tryAcquire(Semaphore semaphore, int permits, Duration wait) {
        return observe("semaphore:" + semaphore.name(), () -> semaphore.tryAcquire(permits, wait));
    }

    /** {@link Semaphore#acquire(int)}, observed. */
    public Lease acquire(Semaphore semaphore, int permits) {
        return observe("semaphore:" + semaphore.name(), () -> Optional.of(semaphore.acquire(permits))).orElseThrow();
    }

    private Optional<Lease> observe(String name, Supplier<Optional<Lease>> acquisition) {
        Observation observation = Observation.createNotStarted(ACQUISITION, registry)
                .contextualName("lock acquire")
                .highCardinalityKeyValue("lock.name", name)
                .start();
        try (Observation.Scope ignored = observation.openScope()) {
            Optional<Lease> lease = acquisition.get();
            lease.ifPresentOrElse(l -> acquired(observation, l),
                    () -> observation.lowCardinalityKeyValue("outcome", "timeout"));
            return lease;
        } catch (RuntimeException e) {
            observation.lowCardinalityKeyValue("outcome", "failed");
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }

    private static void acquired(Observation observation, Lease lease) {
        observation.lowCardinalityKeyValue("outcome", "acquired");
        observation.highCardinalityKeyValue("lock.fencing-token", Long.toString(lease.fencingToken()));
    }
}
