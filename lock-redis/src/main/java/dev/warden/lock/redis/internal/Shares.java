package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The driver's shared names (semaphores, read-write locks): starts their attempts, renews and releases
 * their grants ({@link RedisDriver} dispatches {@link SharedGrant}s here), and removes entries. One script
 * call each, compare-and-renew or compare-and-delete on the entry id (which holds the owner) and the
 * token. Their keys ({@link SharedKeys}) are apart from every lock's, and the operator's listing, reading,
 * eviction and token floor cover locks only.
 *
 * <p>Concurrency: immutable; the attempt counter is atomic.
 */
final class Shares {

    private static final Logger log = LoggerFactory.getLogger(Shares.class);

    /** Makes entry ids unique per attempt: the attempts of one acquisition share its owner. */
    private static final AtomicLong ATTEMPTS = new AtomicLong();

    private final RedisDriver driver;
    private final String namespace;

    Shares(RedisDriver driver, String namespace) {
        this.driver = driver;
        this.namespace = namespace;
    }

    /**
     * An entry per attempt, so that what an earlier attempt of the same acquisition left (its abandon
     * failed, or a grant reached it too late) is never taken for this one's: it is removed by that
     * attempt's late-reply handler or expires.
     */
    LockAttempt attempt(String name, String owner, Share share) {
        return new SharedAttempt(driver, name, share, SharedKeys.of(namespace, name),
                owner + "#" + ATTEMPTS.incrementAndGet());
    }

    CompletableFuture<Boolean> renew(SharedGrant grant, long ttlMillis) {
        return driver.calls().retrying("the shared renew script for " + grant.keys().entries(),
                () -> driver.scripts().sharedRenew(grant.keys(), grant.id(), grant.fencingToken(), ttlMillis)
                        .thenApply(Shares::isOne), late -> { });
    }

    CompletableFuture<Boolean> release(SharedGrant grant) {
        return driver.calls().retrying("the shared release script for " + grant.keys().entries(),
                () -> driver.scripts().sharedRelease(grant.keys(), grant.id(), grant.fencingToken())
                        .thenApply(Shares::isOne), late -> { });
    }

    /** Removes an attempt's entry whatever its token (abandoning), waking the attempts behind it. */
    CompletableFuture<Void> leave(SharedKeys keys, String id) {
        return driver.calls().retrying("the shared release script for " + keys.entries() + " (abandoning)",
                () -> driver.scripts().sharedRelease(keys, id, 0).thenApply(removed -> (Void) null), late -> { });
    }

    /** Removes the entry of a poll that answered after its deadline: nobody will see it, granted or not. */
    void leaveQuietly(SharedKeys keys, String id) {
        if (driver.isClosed()) {
            return;
        }
        driver.scripts().sharedRelease(keys, id, 0).whenComplete((removed, error) -> {
            if (error != null) {
                log.warn("could not remove the entry of {} polled after its poll timed out; it expires within its TTL",
                        keys.entries(), error);
            }
        });
    }

    private static boolean isOne(Long reply) {
        return reply != null && reply == 1L;
    }
}
