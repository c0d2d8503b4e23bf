/**
 * The {@code redis} lock backend, on Lettuce, for one server, a Sentinel-monitored primary or a Redis
 * Cluster, as the endpoints name it ({@code redis://}, {@code redis-sentinel://},
 * {@code redis-cluster://}, or their {@code rediss} forms for TLS). An application names it only in
 * settings ({@code warden.lock.backend=redis}), with this module on the class path;
 * {@link dev.warden.lock.LockClient#create(java.util.Map)} then finds {@link RedisLockProvider} through
 * {@link java.util.ServiceLoader}. The provider's documentation describes the keys each lock uses, how
 * fencing tokens are made, and the {@code warden.lock.redis.*} options. Everything else is in
 * {@code dev.warden.lock.redis.internal}.
 */
package dev.warden.lock.redis;
