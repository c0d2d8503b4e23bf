package dev.warden.lock.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A driver whose locks a client may keep on the server after their holder released them, and lend again
 * without a round trip ({@code warden.lock.lease-cache}): each grant reserves a block of fencing tokens, so
 * the client's local re-grants carry new, higher tokens no other grant of the name can get, and the driver
 * tells the client when a contender asks for a lock it keeps, so it gives the lock up at once.
 *
 * <p>lock-api decides what to keep and for how long; the driver only reserves tokens and reports
 * contenders. A backend whose tokens cannot be reserved in blocks (etcd's create revisions, ZooKeeper's
 * sequence numbers: a waiter queued during a kept hold may already own a lower one) does not implement it.
 */
public interface LeaseCachingDriver extends HandOffDriver {

    /**
     * As {@link #attempt}, except that a grant reserves up to {@code tokens} consecutive fencing tokens:
     * {@code fencingToken()} to {@link #lastReserved lastReserved(grant)} are this grant's, and every later
     * grant of the name, by any client, gets a larger token.
     */
    LockAttempt attemptReserving(String name, String owner, int tokens);

    /**
     * The last token {@code grant} reserved: at least its own, at most {@code tokens - 1} above it. A backend
     * may reserve fewer (Redis: to keep its tokens near a clock), and reserves none while a contender of
     * another client waits: a grant with nothing reserved beyond its own token is not kept.
     */
    long lastReserved(Grant grant);

    /** As {@link #handOff}, with the next grant reserving {@code tokens} tokens. */
    CompletionStage<HandOff> handOffReserving(Grant grant, String owner, Duration ttl, int tokens);

    /**
     * Starts watching {@code name} for contenders: {@code asked} runs, on a driver thread and without
     * blocking, each time a poll for the lock finds it held (possibly a poll of this client's own, and at
     * most once per poll). The stage completes once the watch is in place, so no poll after that is missed
     * while the connection stays up; a poll missed in a reconnect is repeated by its contender's fallback
     * wait.
     */
    CompletionStage<ContenderWatch> watchContenders(String name, Runnable asked);

    /** A watch on one name's contenders; closing it stops {@code asked} (idempotent). */
    interface ContenderWatch extends AutoCloseable {
        @Override
        void close();
    }
}
