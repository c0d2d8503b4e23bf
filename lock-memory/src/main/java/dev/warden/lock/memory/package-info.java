/**
 * The {@code memory} lock backend: locks in this JVM's memory, for tests and single-JVM programs, never
 * a distributed lock. With this module on the class path, {@code warden.lock.backend=memory} and the
 * endpoint {@code memory://<store>} give a client that shares its locks with every client naming the
 * same store in this JVM. It runs lock-api's acquire loop, queueing, lease keeping and listeners over
 * the same SPI as the server backends, and passes the same core contract, so tests on it exercise those
 * paths without a server (but with no faults to inject). See {@link MemoryLockProvider}.
 */
package dev.warden.lock.memory;
