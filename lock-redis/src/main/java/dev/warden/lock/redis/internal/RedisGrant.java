package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted lock: the value the acquire script stored ({@code owner:token}), which renew and
 * release compare before they touch the key.
 */
record RedisGrant(Keys keys, String value, long fencingToken) implements Grant {

    static RedisGrant of(Grant grant) {
        if (grant instanceof RedisGrant g) {
            return g;
        }
        throw new IllegalArgumentException("not a Redis grant: " + grant);
    }
}
