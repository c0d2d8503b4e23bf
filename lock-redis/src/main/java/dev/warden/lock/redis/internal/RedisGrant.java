package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted lock: the value the acquire script stored ({@code owner:token}), which renew and
 * release compare before they touch the key, and the last token the grant reserved (its own, or a
 * lease-caching client's block).
 */
record RedisGrant(Keys keys, String value, long fencingToken, long lastReserved) implements Grant {

    /** A grant that reserved only its own token. */
    RedisGrant(Keys keys, String value, long fencingToken) {
        this(keys, value, fencingToken, fencingToken);
    }

    static RedisGrant of(Grant grant) {
        if (grant instanceof RedisGrant g) {
            return g;
        }
        throw new IllegalArgumentException("not a Redis grant: " + grant);
    }
}
