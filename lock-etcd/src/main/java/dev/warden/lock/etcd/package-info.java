/**
 * The {@code etcd} lock backend. An application names it only in settings
 * ({@code warden.lock.backend=etcd}, endpoints {@code etcd://host:port} or, for TLS,
 * {@code etcds://host:port}), with this module on the class path;
 * {@link dev.warden.lock.LockClient#create(java.util.Map)} then finds {@link EtcdLockProvider} through
 * {@link java.util.ServiceLoader}. The provider's documentation describes the model (one etcd lease
 * per client, a queue of keys per lock, the holder key's create revision as the fencing token) and the
 * {@code warden.lock.etcd.*} options for users and TLS. Everything else is in
 * {@code dev.warden.lock.etcd.internal}.
 */
package dev.warden.lock.etcd;
