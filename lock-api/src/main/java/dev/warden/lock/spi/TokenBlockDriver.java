package dev.warden.lock.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A lease-caching driver whose grants reserve their block of fencing tokens in the granting step itself, so a
 * kept hold needs no further round trip before its first re-grant (Redis: the acquire and hand-off scripts
 * move the lock's fence). It hands locks on in one step too.
 */
public interface TokenBlockDriver extends LeaseCachingDriver, HandOffDriver {

    /**
     * As {@link #attempt}, except that a grant reserves up to {@code tokens} consecutive fencing tokens:
     * {@code fencingToken()} to {@link #lastReserved lastReserved(grant)} are this grant's, and every later
     * grant of the name, by any client, gets a larger token.
     */
    LockAttempt attemptReserving(String name, String owner, int tokens);

    /**
     * The last token {@code grant} reserved: at least its own, at most {@code tokens - 1} above it. A backend
     * may reserve fewer (Redis: to keep its tokens near a clock), and reserves none while a contender of
     * another client waits, or asked shortly before (its poll left a mark): a grant with nothing reserved
     * beyond its own token is not kept.
     */
    long lastReserved(Grant grant);

    /** As {@link #handOff}, with the next grant reserving {@code tokens} tokens. */
    CompletionStage<HandOff> handOffReserving(Grant grant, String owner, Duration ttl, int tokens);
}
