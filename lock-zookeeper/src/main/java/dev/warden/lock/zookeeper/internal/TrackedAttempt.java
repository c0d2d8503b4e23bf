package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.LockAttempt;

/**
 * An attempt the driver keeps track of until it is granted or abandoned (a lock's
 * {@link ZooKeeperAttempt}, a shared name's {@link SharedAttempt}), to tell it about the session and
 * the driver's end.
 */
interface TrackedAttempt extends LockAttempt {

    /** The session expired or the client closed: wake a pending wait so the next poll says so. */
    void interrupt();

    /** The driver closed: a pending wait fails with CLOSED. */
    void closed();
}
