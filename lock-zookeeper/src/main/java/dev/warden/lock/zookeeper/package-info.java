/**
 * The {@code zookeeper} lock backend, on Apache Curator. An application names it only in settings
 * ({@code warden.lock.backend=zookeeper}, endpoints {@code zookeeper://host[:port]}, one per server),
 * with this module on the class path; {@link dev.warden.lock.LockClient#create(java.util.Map)} then
 * finds {@link ZooKeeperLockProvider} through {@link java.util.ServiceLoader}. The provider's
 * documentation describes the model (the client's ZooKeeper session as the lease, a queue of ephemeral
 * sequential nodes per lock, the holder node's {@code czxid} as the fencing token), the {@code lost-on}
 * option and the security options (digest users, node ACLs, TLS). Everything else is in
 * {@code dev.warden.lock.zookeeper.internal}.
 */
package dev.warden.lock.zookeeper;
