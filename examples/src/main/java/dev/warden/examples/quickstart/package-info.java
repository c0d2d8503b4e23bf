/**
 * The quick start: {@link dev.warden.examples.quickstart.QuickStart} is one program for every backend,
 * where only the settings file differs ({@code examples/config/redis.properties}, {@code etcd.properties}
 * or {@code zookeeper.properties}). It acquires a lock, writes to a resource with the lease's fencing
 * token, shows that a write carrying an older token is refused, and releases.
 */
package dev.warden.examples.quickstart;
