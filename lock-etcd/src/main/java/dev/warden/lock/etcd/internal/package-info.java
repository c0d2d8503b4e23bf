/**
 * The etcd driver behind {@link dev.warden.lock.etcd.EtcdLockProvider}: {@link EtcdDriver}, with what
 * it runs on from open to close ({@code Lifecycle}: threads, channel, the current session), the
 * client's session ({@code Session}: one etcd lease, kept alive every TTL/3 and lost as a whole), one
 * contender's place in a lock's queue ({@code EtcdAttempt}, over {@code QueuedAttempt}, which it shares with {@code SharedAttempt}), shared names for semaphores and read-write
 * locks ({@code SharedLocks}: {@code SharedAttempt}, {@code SharedQueue}, {@code SharedWait},
 * {@code SharedSlots}, {@code SharedGrant}), the gRPC calls on etcd's protocol messages
 * ({@code Calls}, {@code Requests}, {@code Tokens}) and the choice of member ({@code Members},
 * {@code StalledMember}). {@link Keys} is where a lock's keys live; {@link Endpoints},
 * {@link Credentials} and {@code Tls} read the settings. Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.etcd.internal;
