package dev.warden.lock.spi;

import java.util.concurrent.CompletionStage;

/**
 * A driver whose locks a client may keep on the server after their holder released them, and lend again
 * without a round trip ({@code warden.lock.lease-cache}): the driver tells the client when a contender asks
 * for a lock it keeps, so it gives the lock up at once.
 *
 * <p>lock-api decides what to keep and for how long, and lends each re-grant a new, higher fencing token from
 * a block the hold reserved: a {@link TokenBlockDriver} reserves the block with the grant itself (Redis: in
 * the granting script); any other caching driver must be a {@link TokenFloorDriver}, and lock-api reserves
 * the block before the first re-grant by raising the token floor above it while the server's hold is still
 * held. lock-api refuses the setting for a caching driver that is neither.
 */
public interface LeaseCachingDriver extends LockDriver {

    /**
     * As {@link #attempt}, for an acquisition whose grant the client may keep after release: a backend whose
     * refused polls leave no trace marks such a grant, so that every contender from the grant on is reported
     * to {@link #watchContenders} (JDBC: the row is marked watched). By default {@link #attempt}.
     */
    default LockAttempt attemptKept(String name, String owner) {
        return attempt(name, owner);
    }

    /**
     * Starts watching the lock {@code grant} holds for contenders: {@code asked} runs, on a driver thread and
     * without blocking, when another acquisition asks for the lock while it is held (a poll that finds it
     * held, or an entry queued behind the holder; possibly one of this client's own). A contender that asked
     * after {@code grant} was made and before the watch was in place is reported too, where the backend can
     * still see it (a queue entry behind the holder); a backend that cannot (a poll leaves no trace) makes up
     * for it when it grants: see {@link TokenBlockDriver#lastReserved}. The stage completes once the watch is
     * in place, so no contender after that is missed while the connection stays up; one missed in a reconnect
     * is repeated by its contender's fallback wait.
     *
     * @param name  the lock's name
     * @param grant the hold of {@code name} the client keeps; the watch may outlive it (a hand-off passes
     *              the same name on to a later grant of this client)
     */
    CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked);

    /** A watch on one name's contenders; closing it stops {@code asked} (idempotent). */
    interface ContenderWatch extends AutoCloseable {
        @Override
        void close();
    }
}
