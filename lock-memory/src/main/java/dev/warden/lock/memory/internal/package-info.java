/**
 * The in-memory driver behind {@link dev.warden.lock.memory.MemoryLockProvider}: {@link MemoryStore}
 * is the "server", one per store name and class loader (holders, a queue per lock, one fencing-token
 * counter); {@link MemoryDriver} is one client's view of a store; {@code MemoryAttempt} is one
 * contender; {@link Endpoints} parses {@code memory://<store>}. Internal to Warden: no compatibility
 * promise.
 */
package dev.warden.lock.memory.internal;
