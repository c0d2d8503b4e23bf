package dev.warden.integration.internal;

import dev.warden.lock.Lease;

/**
 * One acquisition through a registry lock: the lease Warden returned for it (released by the matching
 * {@code unlock()}) and the grant it shares with the thread's other holds of the same token.
 */
record Hold(Lease lease, Grant grant) {
}
