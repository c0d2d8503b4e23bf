package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted row: what renewal and release compare.
 *
 * @param namespace the configured namespace
 * @param name the lock's name as lock-api gave it
 * @param owner the acquisition's owner string
 * @param fencingToken the row's token at the grant
 * @param polledAtNanos when the granting poll was sent ({@link System#nanoTime()}): a contender's notification
 *                      received since may be about this grant
 */
record JdbcGrant(String namespace, String name, String owner, long fencingToken, long polledAtNanos) implements Grant {
}
