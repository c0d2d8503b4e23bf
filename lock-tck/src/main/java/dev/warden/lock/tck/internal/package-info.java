/**
 * Helpers of the conformance kit's clauses, also used by Warden's own backend tests: {@link Await}
 * waits for a condition with a deadline instead of sleeping, and {@link HolderProcess} holds a lock in
 * a child JVM that a test can kill or freeze. Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.tck.internal;
