/**
 * The Redis driver behind {@link dev.warden.lock.redis.RedisLockProvider}: {@link RedisDriver}, a
 * {@link dev.warden.lock.spi.HandOffDriver} that can release a lock and grant it to the next waiter of
 * the same client in one script, dispatching to its connections' life ({@code Lifecycle}) and the
 * operator's reads, evictions, floors and epoch ({@code Operator}). Around it: the topology the endpoints name
 * ({@code Topology}, {@link AddressMap}) and its Lettuce connections ({@code Connections}); the lock
 * scripts ({@code Scripts}, {@code Keys}) and the deadline and retries around every call
 * ({@code Calls}); one contender's polls and its wait for a release message ({@code RedisAttempt}
 * over {@code ChannelAttempt}, {@code ChannelWait}, {@code Subscriptions}); shared names' queues, attempts and grants ({@code Shares},
 * {@code SharedKeys}, {@code SharedAttempt}, {@code SharedGrant},
 * the {@code shared-*} scripts). What it shares with the quota engine about Redis (reading the endpoints,
 * the login and TLS settings, client options, failures) is in warden-redis's {@code dev.warden.redis.internal}.
 * Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.redis.internal;
