/**
 * Warden's lock API: what an application uses to take a distributed lock, the same whichever backend
 * serves it, so code does not change when the backend does. Start with
 * {@link LockClient#create(java.util.Map)}, which reads the {@code warden.lock.*} settings and connects
 * to the backend they name (its module must be on the class path); {@link LockClient#lock(String)}
 * gives a {@link DistributedLock}, and acquiring it gives a {@link Lease}: the fencing token to pass to
 * the guarded resource, and word when the lock is lost ({@link LeaseLost}). Failures are
 * {@link LockException}s whose {@link LockException.Reason} says what went wrong; a
 * {@link LockObserver} connects metrics and tracing. {@link WardenSettings} is the settings grammar the
 * quota engine shares, and {@link Redaction} keeps credentials out of every endpoint Warden prints.
 */
package dev.warden.lock;
