/**
 * Project Reactor over Warden. {@link dev.warden.reactor.ReactiveLock} wraps a lock (or a semaphore's permits):
 * {@code acquire()} and {@code tryAcquire(wait)} as {@code Mono<Lease>} on lock-api's asynchronous acquisition
 * (a cancelled subscription leaves nothing held), {@code release(lease)} without blocking, a critical section
 * ({@code withLock}, {@code withLockMono}) that releases its lease when the body completes, fails or is
 * cancelled, and {@code lost(lease)}, a lease's loss as a {@code Mono}. {@link dev.warden.reactor.ReactiveQuota}
 * gives the quota engine's operations as {@code Mono}s (the deductions on its asynchronous API, the rest on a
 * scheduler that may block). Reactive acquisitions are not reentrant: a pipeline has no thread to re-enter
 * with. The guide: {@code docs/reactor.md}.
 */
package dev.warden.reactor;
