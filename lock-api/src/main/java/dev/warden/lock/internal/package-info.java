/**
 * What every backend shares behind the lock API, written once so that a driver only says how to touch
 * its server: {@link ClientFactory} (what {@link dev.warden.lock.LockClient#create(java.util.Map)}
 * calls) builds the client; {@code Acquisition} is the one acquire loop, with {@code Outage} for
 * retries while the server cannot be reached; {@code LocalQueue} lets only the head of a name's
 * contenders in one client talk to the server; {@code Registry} keeps what a client holds, for
 * reentrancy and close; {@code HeldLock} keeps a lease (renewals, validity deadline, loss) and
 * {@code Release} ends it; {@code LossNotice} and {@code LeakDetector} report lost and dropped leases.
 * These classes stay in one package on purpose: splitting them would only add public methods and a
 * package cycle. Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.internal;
