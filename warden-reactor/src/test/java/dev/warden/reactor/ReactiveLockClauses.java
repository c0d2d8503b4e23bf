package dev.warden.reactor;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link ReactiveLock} promises, on one backend: each concrete test class names its settings. Whether the
 * lock is free afterwards is asked of another client, which must get it within a deadline.
 */
abstract class ReactiveLockClauses {

    static final Duration DEADLINE = Duration.ofSeconds(10);

    private final List<LockClient> clients = new ArrayList<>();

    /** The settings of every client of a test (one server or store, so the clients contend). */
    protected abstract Map<String, Object> settings();

    LockClient client() {
        return client(LockObserver.NONE);
    }

    LockClient client(LockObserver observer) {
        LockClient c = LockClient.create(settings(), observer);
        clients.add(c);
        return c;
    }

    static String newName() {
        return "reactor-" + UUID.randomUUID();
    }

    /** Whether {@code other} gets the lock within {@code wait}; what it gets it gives back. */
    static boolean freeFor(LockClient other, String name, Duration wait) {
        Optional<Lease> lease = other.lock(name).tryAcquire(wait);
        lease.ifPresent(Lease::release);
        return lease.isPresent();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    @Test
    @DisplayName("acquire emits a valid lease with its fencing token; release frees the lock for another client")
    void acquireAndRelease() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        ReactiveLock lock = ReactiveLock.of(c.lock(name));

        Lease lease = lock.acquire().block(DEADLINE);
        assertThat(lease).isNotNull();
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.name()).isEqualTo(name);
        assertThat(lease.fencingToken()).isPositive();
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).as("held").isEmpty();

        StepVerifier.create(ReactiveLock.release(lease)).expectNext(ReleaseOutcome.RELEASED).expectComplete().verify(DEADLINE);
        assertThat(freeFor(other, name, Duration.ZERO)).as("released before release() completed").isTrue();
        StepVerifier.create(ReactiveLock.release(lease)).expectNext(ReleaseOutcome.ALREADY_RELEASED).expectComplete()
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("nothing happens until a subscription; each subscription is its own acquisition")
    void coldAndOnePerSubscription() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        Mono<Lease> acquire = ReactiveLock.of(c.lock(name)).acquire();
        assertThat(freeFor(other, name, Duration.ZERO)).as("assembling acquires nothing").isTrue();

        Lease first = acquire.block(DEADLINE);
        assertThat(first).isNotNull();
        assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
        Lease second = acquire.block(DEADLINE);
        assertThat(second).isNotNull();
        assertThat(second.fencingToken()).as("a new grant").isGreaterThan(first.fencingToken());
        second.release();
    }

    @Test
    @DisplayName("tryAcquire completes empty when the wait runs out (and when zero finds the lock held)")
    void tryAcquireEmptyOnTimeout() {
        LockClient holder = client();
        LockClient c = client();
        String name = newName();
        try (Lease held = holder.lock(name).acquire()) {
            ReactiveLock lock = ReactiveLock.of(c.lock(name));
            StepVerifier.create(lock.tryAcquire(Duration.ofMillis(200))).expectComplete().verify(DEADLINE);
            StepVerifier.create(lock.tryAcquire(Duration.ZERO)).expectComplete().verify(DEADLINE);
            assertThat(held.isValid()).isTrue();
        }
        StepVerifier.create(ReactiveLock.of(c.lock(name)).tryAcquire(Duration.ofSeconds(5)))
                .assertNext(lease -> assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED))
                .expectComplete()
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("withLock relays the body's values and releases before it completes")
    void withLockReleasesOnComplete() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        ReactiveLock lock = ReactiveLock.of(c.lock(name));

        StepVerifier.create(lock.withLock(lease -> Flux.just(lease.isValid(), other.lock(name).tryAcquire(Duration.ZERO).isPresent())))
                .expectNext(true, false)
                .expectComplete()
                .verify(DEADLINE);
        assertThat(freeFor(other, name, Duration.ZERO)).as("released before the completion was passed on").isTrue();
    }

    @Test
    @DisplayName("withLock passes the body's error on, unchanged, and releases before it does")
    void withLockReleasesOnError() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        IllegalStateException boom = new IllegalStateException("boom");

        StepVerifier.create(ReactiveLock.of(c.lock(name)).withLock(lease -> Flux.concat(Flux.just(1), Flux.error(boom))))
                .expectNext(1)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isSameAs(boom);
                    assertThat(e.getSuppressed()).isEmpty();
                })
                .verify(DEADLINE);
        assertThat(freeFor(other, name, Duration.ZERO)).isTrue();
    }

    @Test
    @DisplayName("withLock releases when the subscriber cancels the running body")
    void withLockReleasesOnCancel() throws InterruptedException {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        CountDownLatch running = new CountDownLatch(1);

        Disposable subscription = ReactiveLock.of(c.lock(name))
                .withLock(lease -> Flux.never().doOnSubscribe(s -> running.countDown()))
                .subscribe();
        assertThat(running.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)).as("the body runs").isTrue();
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).as("held while the body runs").isEmpty();

        subscription.dispose();
        assertThat(freeFor(other, name, DEADLINE)).as("released after the cancellation").isTrue();
    }

    @Test
    @DisplayName("withLock releases when an operator downstream cancels (take)")
    void withLockReleasesWhenTaken() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();

        StepVerifier.create(ReactiveLock.of(c.lock(name)).withLock(lease -> Flux.interval(Duration.ofMillis(5))).take(3))
                .expectNext(0L, 1L, 2L)
                .expectComplete()
                .verify(DEADLINE);
        assertThat(freeFor(other, name, DEADLINE)).isTrue();
    }

    @Test
    @DisplayName("cancelling while the acquisition waits leaves nothing held: the grant never comes, or is released")
    void cancelWhileWaiting() {
        LockClient holder = client();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        LockClient c = client(new LockObserver() {
            @Override
            public void granted(String name, long fencingToken, Duration waited) {
                granted.incrementAndGet();
            }

            @Override
            public void released(String name, long fencingToken, ReleaseOutcome outcome) {
                released.incrementAndGet();
            }
        });
        LockClient third = client();
        String name = newName();

        Lease held = holder.lock(name).acquire();
        StepVerifier.create(ReactiveLock.of(c.lock(name)).acquire())
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(300))                 // waiting: the lock is held
                .thenCancel()
                .verify(DEADLINE);
        assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);

        assertThat(freeFor(third, name, DEADLINE)).as("the cancelled waiter holds nothing").isTrue();
        Await.until(DEADLINE, "every grant of the cancelled client released", () -> granted.get() == released.get());
    }

    @Test
    @DisplayName("the fencing token is reachable in the body and rises with each grant")
    void fencingTokenInTheBody() {
        LockClient c = client();
        ReactiveLock lock = ReactiveLock.of(c.lock(newName()));

        Long first = lock.withLockMono(lease -> Mono.just(lease.fencingToken())).block(DEADLINE);
        Long second = lock.withLockMono(lease -> Mono.just(lease.fencingToken())).block(DEADLINE);
        assertThat(first).isPositive();
        assertThat(second).isGreaterThan(first);
    }

    @Test
    @DisplayName("withLockMono: the body's one value, or empty; the lock released either way")
    void withLockMono() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        ReactiveLock lock = ReactiveLock.of(c.lock(name));

        StepVerifier.create(lock.withLockMono(lease -> Mono.just(lease.name()))).expectNext(name).expectComplete().verify(DEADLINE);
        StepVerifier.create(lock.withLockMono(lease -> Mono.empty())).expectComplete().verify(DEADLINE);
        assertThat(freeFor(other, name, Duration.ZERO)).isTrue();
    }

    @Test
    @DisplayName("a lease lost in the body: lost(lease) tells it, and withLock ends with LockException LOST")
    void lostInTheBody() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();

        StepVerifier.create(ReactiveLock.of(c.lock(name)).withLock(lease -> {
                    lease.setMaxHoldTime(Duration.ZERO);                 // ends the hold now: lost, MAX_HOLD_TIME
                    return ReactiveLock.lost(lease).map(LeaseLost::reason);
                }))
                .expectNext(LostReason.MAX_HOLD_TIME)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(LockException.class,
                        le -> assertThat(le.reason()).isEqualTo(LockException.Reason.LOST)))
                .verify(DEADLINE);
        assertThat(freeFor(other, name, DEADLINE)).isTrue();
    }

    @Test
    @DisplayName("takeUntilOther(lost(lease)) stops a body when its lease is lost")
    void bodyStoppedOnLoss() {
        LockClient c = client();
        String name = newName();

        StepVerifier.create(ReactiveLock.of(c.lock(name)).withLock(lease -> Flux.<Long>never()
                        .takeUntilOther(ReactiveLock.lost(lease))
                        .doOnSubscribe(s -> lease.setMaxHoldTime(Duration.ZERO))))
                .expectErrorSatisfies(e -> assertThat(((LockException) e).reason()).isEqualTo(LockException.Reason.LOST))
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("a lease is not bound to a thread: released from another scheduler's thread")
    void releasedFromAnotherThread() {
        LockClient c = client();
        LockClient other = client();
        String name = newName();
        Lease lease = ReactiveLock.of(c.lock(name)).acquire().block(DEADLINE);
        assertThat(lease).isNotNull();
        AtomicReference<String> releasedOn = new AtomicReference<>();

        StepVerifier.create(ReactiveLock.release(lease)
                        .doOnSubscribe(s -> releasedOn.set(Thread.currentThread().getName()))
                        .subscribeOn(Schedulers.parallel()))
                .expectNext(ReleaseOutcome.RELEASED)
                .expectComplete()
                .verify(DEADLINE);
        assertThat(releasedOn.get()).startsWith("parallel");
        assertThat(freeFor(other, name, Duration.ZERO)).isTrue();
    }

    @Test
    @DisplayName("reactive holds are not reentrant: inside the body the same lock is busy, for a reactive or a blocking try")
    void notReentrant() {
        LockClient c = client();
        DistributedLock raw = c.lock(newName());
        ReactiveLock lock = ReactiveLock.of(raw);

        StepVerifier.create(lock.withLock(lease -> lock.tryAcquire(Duration.ZERO).hasElement()
                        .map(again -> List.of(again, raw.tryAcquire(Duration.ZERO).isPresent()))))
                .expectNext(List.of(false, false))
                .expectComplete()
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("a semaphore's permits: two leases of one permit each, a third waits")
    void semaphorePermits() {
        LockClient c = client();
        String name = newName();
        ReactiveLock permits = ReactiveLock.of(c.semaphore(name, 2), 1);

        Lease one = permits.acquire().block(DEADLINE);
        Lease two = permits.acquire().block(DEADLINE);
        assertThat(one).isNotNull();
        assertThat(two).isNotNull();
        StepVerifier.create(permits.tryAcquire(Duration.ZERO)).expectComplete().verify(DEADLINE);
        one.release();
        StepVerifier.create(permits.withLockMono(lease -> Mono.just(lease.isValid()))).expectNext(true).expectComplete()
                .verify(DEADLINE);
        two.release();
    }
}
