/**
 * Talking to Redis through Lettuce, as the Redis lock backend and the quota engine both do: client
 * options and resources ({@link dev.warden.redis.internal.LettuceClients}), credentials from an
 * endpoint's user-info ({@link dev.warden.redis.internal.UserInfo}) and what a failure means
 * ({@link dev.warden.redis.internal.RedisFailures}). Internal to Warden: no compatibility promise.
 */
package dev.warden.redis.internal;
