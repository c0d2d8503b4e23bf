package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted entry of a shared name (a semaphore's permits, a read-write lock's side): what renewal and
 * release compare.
 *
 * @param namespace the configured namespace
 * @param name the shared name as lock-api gave it
 * @param owner the acquisition's owner string
 * @param fencingToken the entry's token, drawn at its arrival
 */
record SharedGrant(String namespace, String name, String owner, long fencingToken) implements Grant {
}
