/**
 * The service-provider interface a lock backend implements; applications do not call it. A backend
 * registers a {@link LockProvider} for {@link java.util.ServiceLoader}, and from the settings lock-api
 * has already checked ({@link LockConfig}) the provider opens a {@link LockDriver}. The driver's few
 * calls (start a {@link LockAttempt}, renew and release a {@link Grant}) are all a backend writes: the
 * acquire loop, local queueing, reentrancy, lease keeping, validity deadlines and listeners live once
 * in lock-api. A driver that can release a lock and grant it to a waiter of the same client in one
 * server step also implements {@link HandOffDriver}; one that can tell the client of contenders also
 * implements {@link LeaseCachingDriver} (leases kept after release), with its tokens reserved in blocks by
 * its grants ({@link TokenBlockDriver}) or through its token floor ({@link TokenFloorDriver}). The lock-tck
 * module's contract tests check a
 * backend against these rules.
 */
package dev.warden.lock.spi;
