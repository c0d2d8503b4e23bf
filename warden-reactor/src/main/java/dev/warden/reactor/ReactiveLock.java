package dev.warden.reactor;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.Semaphore;
import dev.warden.reactor.internal.Ending;
import dev.warden.reactor.internal.LeaseMono;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A Warden lock (or a semaphore's permits) for Project Reactor: acquisition and release as {@link Mono}s that
 * never block a thread, and a critical section that releases its lease however it ends.
 *
 * <pre>{@code
 * ReactiveLock lock = ReactiveLock.of(locks.lock("merchant:42"));
 * Mono<Receipt> paid = lock.withLockMono(lease -> ledger.write(lease.fencingToken(), entry));
 * }</pre>
 *
 * <p><b>Cold, one acquisition per subscription.</b> Nothing happens until a subscription; each subscription
 * (each retry, each repeat) starts its own acquisition through {@link DistributedLock#acquireAsync()}.
 *
 * <p><b>Cancellation leaves nothing held.</b> Cancelling while the acquisition waits cancels lock-api's future,
 * which abandons the attempt and releases a grant that raced in; a lease that arrives as the subscriber cancels
 * is released here, never lost between the two. A lease that was delivered belongs to the subscriber:
 * {@link #acquire()}'s subscriber must release it ({@link #release(Lease)}); {@link #withLock} does that itself,
 * and is the safe choice where the subscription may be cancelled (see {@link #acquire()}).
 *
 * <p><b>Threads.</b> The lease is delivered on one of the client's callback threads (a pool of Warden's,
 * never a driver's I/O thread; on the subscriber's own thread when the grant came before its request), and a
 * release completes on a callback thread too: keep the work downstream non-blocking, or
 * move it with {@code publishOn}. A lease may be used and released on any thread. Reactive acquisitions are
 * <em>not reentrant</em>: lock-api's reentrancy belongs to a thread, which a reactive pipeline does not have,
 * so a second acquisition of a lock the same pipeline holds waits for the first like any other contender (a
 * nested {@code withLock} of the same lock never ends, unless a wait bounds it), and a blocking
 * {@code acquire()} inside the body does not re-enter the reactive hold either.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class ReactiveLock {

    private final String name;
    private final Supplier<CompletableFuture<Lease>> acquireAsync;
    private final Function<Duration, CompletableFuture<Lease>> acquireAsyncWithin;

    private ReactiveLock(String name, Supplier<CompletableFuture<Lease>> acquireAsync,
                         Function<Duration, CompletableFuture<Lease>> acquireAsyncWithin) {
        this.name = name;
        this.acquireAsync = acquireAsync;
        this.acquireAsyncWithin = acquireAsyncWithin;
    }

    /**
     * The reactive view of {@code lock}: any lock of any backend, a side of a read-write lock, or a lock
     * with a maximum hold time ({@link DistributedLock#withMaxHoldTime}).
     */
    public static ReactiveLock of(DistributedLock lock) {
        Objects.requireNonNull(lock, "lock");
        return new ReactiveLock(lock.name(), lock::acquireAsync, lock::acquireAsync);
    }

    /**
     * The reactive view of {@code permits} permits of {@code semaphore}: each lease holds that many at once.
     *
     * @throws IllegalArgumentException when {@code permits} is below 1 or above the semaphore's count
     */
    public static ReactiveLock of(Semaphore semaphore, int permits) {
        Objects.requireNonNull(semaphore, "semaphore");
        if (permits < 1 || permits > semaphore.permits()) {
            throw new IllegalArgumentException("permits must be 1.." + semaphore.permits() + " for semaphore '"
                    + semaphore.name() + "', was " + permits);
        }
        return new ReactiveLock(semaphore.name(), () -> semaphore.acquireAsync(permits),
                wait -> semaphore.acquireAsync(permits, wait));
    }

    /** The lock's name, as given. */
    public String name() {
        return name;
    }

    /**
     * Acquires, waiting as long as it takes. Emits the lease, or fails as {@link DistributedLock#acquireAsync()}
     * does ({@link LockException} {@code UNAVAILABLE}, {@code CLOSED}, ...); in every case but a delivered lease
     * nothing is left held. The subscriber owns the lease it receives: release it with {@link #release(Lease)}
     * (or {@link Lease#release()} where blocking is allowed), or prefer {@link #withLock}.
     *
     * <p>A subscriber that cancels must still take a lease delivered as it cancels: Reactor's own lambda
     * subscribers ({@code subscribe(consumer)} then {@code dispose()}) drop a value that arrives after
     * {@code dispose()}, and a dropped lease stays held until its client closes. {@link #withLock} (built on
     * {@code Flux.usingWhen}, which releases a resource that arrives after a cancellation) has no such window;
     * nor has a {@code BaseSubscriber}, which is given every value.
     */
    public Mono<Lease> acquire() {
        return new LeaseMono(acquireAsync);
    }

    /**
     * Acquires, waiting at most {@code wait} (zero tries once); completes empty when the wait ran out.
     *
     * @throws IllegalArgumentException when {@code wait} is negative
     */
    public Mono<Lease> tryAcquire(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must be zero or positive, was " + wait);
        }
        return new LeaseMono(() -> acquireAsyncWithin.apply(wait))
                .onErrorResume(ReactiveLock::waitRanOut, e -> Mono.empty());
    }

    /**
     * Releases {@code lease} when subscribed, without blocking, from any thread; emits what the release did
     * ({@link ReleaseOutcome#LOST} when the lease had been lost, {@link ReleaseOutcome#ALREADY_RELEASED} the
     * second time), on a Warden thread. Fails with {@link LockException} {@code UNAVAILABLE} when the server did
     * not confirm the release: the lock then expires within its TTL, as renewal has stopped.
     */
    public static Mono<ReleaseOutcome> release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return Ending.release(lease);
    }

    /**
     * Runs {@code body} while holding the lock: acquires when subscribed (waiting as long as it takes), subscribes
     * to what {@code body} returns for the lease, relays its values, and releases the lease when it completes,
     * fails, or the subscriber cancels ({@code Flux.usingWhen}). The completion or the error is passed on only once
     * the release has ended, so whoever hears of it finds the lock released; after a cancellation the release
     * runs in the background.
     *
     * <p>How it ends: as the body does, with two exceptions. When the body completed but the lease had been lost
     * meanwhile, it fails with {@link LockException} {@code LOST} (the body's values were relayed, but the section
     * was not protected to its end); when the release was not confirmed, with {@code UNAVAILABLE}. When the body
     * failed, its error is passed on with those added as suppressed. A lease is not interrupted when it is lost:
     * to stop the body then, let it end on {@link #lost(Lease)}, e.g.
     * {@code work.takeUntilOther(ReactiveLock.lost(lease))}.
     *
     * <p>The body is subscribed on the thread that delivered the lease, one of Warden's callback threads.
     */
    public <T> Flux<T> withLock(Function<? super Lease, ? extends Publisher<? extends T>> body) {
        Objects.requireNonNull(body, "body");
        return Flux.defer(() -> {
            Ending ending = new Ending();
            Flux<T> run = Flux.usingWhen(acquire(), body, ending::completed, ending::failed, ending::cancelled);
            return run.concatWith(ending.verdict());
        });
    }

    /** {@link #withLock} for a body of at most one value. */
    public <T> Mono<T> withLockMono(Function<? super Lease, ? extends Mono<? extends T>> body) {
        Objects.requireNonNull(body, "body");
        return withLock(body).singleOrEmpty();
    }

    /**
     * Emits how {@code lease} was lost, when it is ({@link Lease#onLost}); never completes for a lease released
     * without a loss, so use it to end other work ({@code takeUntilOther}) rather than to wait on. Delivered on
     * Reactor's {@link Schedulers#parallel()} scheduler, not on the client's one event thread that tells it.
     * Each subscription registers a listener with the lease that lives as long as the lease: subscribe once per
     * lease (or {@code cache()} it).
     */
    public static Mono<LeaseLost> lost(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return Mono.<LeaseLost>create(sink -> lease.onLost(sink::success)).publishOn(Schedulers.parallel());
    }

    private static boolean waitRanOut(Throwable e) {
        return e instanceof LockException le && le.reason() == LockException.Reason.TIMEOUT;
    }

    @Override
    public String toString() {
        return "ReactiveLock[" + name + "]";
    }
}
