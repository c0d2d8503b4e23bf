package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted entry of a shared name: its id (the owner and the attempt) and the token the poll that
 * entered it took, which renew and release compare before they touch the entry.
 */
record SharedGrant(SharedKeys keys, String id, long fencingToken) implements Grant {
}
