/**
 * The ZooKeeper driver behind {@link dev.warden.lock.zookeeper.ZooKeeperLockProvider}:
 * {@link ZooKeeperDriver}, on one Curator client whose session is the lease, with that client from
 * open to close ({@code Lifecycle}), the session's connection states and epochs
 * ({@code ZooKeeperSession}), the grants handed out, renewed, released and cleaned up after
 * ({@code Grants}), the node operations ({@code Nodes}), one
 * contender's place in a lock's queue ({@code ZooKeeperAttempt}, over {@code QueuedAttempt}, which it shares with {@code SharedAttempt}), a shared name's queue and grant rule
 * ({@code SharedQueue}, {@code SharedAttempt}, {@code SharedGrant}) and Curator calls bounded by the
 * request timeout ({@code Calls}, {@code RetryWithinDeadline}). {@link Paths} is where a lock's nodes
 * live; {@link Endpoints} and {@link Security} read the settings, and {@code Namespaces} and
 * {@code AuthAfterConnect} apply the security ones. Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.zookeeper.internal;
