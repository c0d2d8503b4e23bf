package dev.warden.lock.internal;

import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.internal.time.Timekeeper.Alarm;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.HandOffDriver;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import dev.warden.lock.spi.LockAttempt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Lease caching ({@code warden.lock.lease-cache}): the locks' side of the driver lock-api calls when the
 * setting is on. A server grant's hold reserves a block of up to {@link #TOKEN_BLOCK} fencing tokens: a
 * {@link TokenBlockDriver} with the grant itself; over any other driver the cache raises the backend's token
 * floor above the block before the first re-grant, while the server's hold is still held (one more round
 * trip, at the first release or hand-off of each server grant). When its holder releases, the server's hold
 * is kept (<em>parked</em>) for the linger time, and the client's next acquisition of the name takes it back
 * at once with the block's next token (a {@link LentGrant}). A contender from anywhere ends a parked hold at
 * once and makes a lent one end at its release, so the contender waits at most the watch's message and one
 * release longer than without caching. A hold granted while, or shortly after (the linger time), a
 * contender asked for its name reserves nothing and is not kept.
 *
 * <p>A hold is parked only while it is fresh — its last server confirmation (the grant's poll or a
 * renewal) less than a third of the TTL ago, so a lease lent from it has the validity and renewal schedule
 * of a fresh grant — while its block has tokens left, while the watch on its contenders is in place, and
 * never once a contender asked or the client is closing. A block used up is renewed by the hand-off script
 * when a local waiter takes over, else by releasing and acquiring again. Shared names and elections never
 * pass through (their acquisitions go to the driver; their grants' calls are passed on).
 *
 * <p>Concurrency: {@code entries}, {@code contenders}, {@code closed} and every {@link KeptHold}'s fields are
 * guarded by {@code this}; no call to the driver or the timekeeper is made while holding it, except arming
 * or cancelling a timer and reading how many tokens a grant reserved ({@link TokenReservation#reservedByGrant}),
 * neither of which blocks.
 */
final class LeaseCache implements HandOffDriver {

    /** Tokens each server grant asks to reserve ({@link TokenReservation#BLOCK}). */
    static final int TOKEN_BLOCK = TokenReservation.BLOCK;


    private static final Logger log = LoggerFactory.getLogger(LeaseCache.class);

    private final LeaseCachingDriver driver;
    private final TokenReservation tokens;
    private final Timekeeper time;
    private final long lingerNanos;
    private final long freshNanos;
    private final Map<String, KeptHold> entries = new HashMap<>();
    /** The names a contender asked for within a linger time: their next grants are not kept. */
    private final RecentContenders contenders;
    private boolean closed;

    /**
     * @param linger how long a released hold is kept for the next acquisition (positive)
     * @param ttl the client's TTL: a hold is lent again only within a third of it since its last confirmation
     */
    LeaseCache(LeaseCachingDriver driver, Timekeeper time, Duration linger, Duration ttl) {
        this.driver = driver;
        this.tokens = TokenReservation.of(driver);
        this.contenders = new RecentContenders(linger.toNanos());
        this.time = time;
        this.lingerNanos = linger.toNanos();
        this.freshNanos = ttl.toNanos() / 3;
    }

    /** A server attempt on {@code name} whose grant may be kept (one that reserves a block where the driver can). */
    LockAttempt serverAttempt(String name, String owner) {
        return tokens.serverAttempt(name, owner);
    }

    /** The server's grant behind {@code grant}: itself when it was not lent from the cache. */
    static Grant serverGrant(Grant grant) {
        return grant instanceof LentGrant lent ? lent.entry().server : grant;
    }

    // ----- acquiring ----------------------------------------------------------------------------

    @Override
    public LockAttempt attempt(String name, String owner) {
        return new CachedAttempt(this, name, owner);
    }

    /** A parked hold of {@code name} lent to {@code owner}, or null; a parked hold that may not be lent is ended. */
    CompletableFuture<LentGrant> take(String name, String owner) {
        KeptHold ended;
        synchronized (this) {
            KeptHold e = entries.get(name);
            if (e == null || e.lent != null) {
                // Free, or still lent to a lease that was lost and is being freed: the server decides.
                return CompletableFuture.completedFuture(null);
            }
            cancel(e);
            if (mayLend(e, time.nanoTime())) {
                return CompletableFuture.completedFuture(lend(e, owner));
            }
            entries.remove(name);
            ended = e;
        }
        return endOnServer(ended).toCompletableFuture().handle((removed, error) -> null);
    }

    /** The server granted {@code server} to an attempt whose poll was sent at {@code sentAtNanos}. */
    LentGrant adopt(String name, Grant server, String owner, long sentAtNanos) {
        KeptHold e;
        KeptHold stale;
        synchronized (this) {
            boolean contended = contenders.asked(name, time.nanoTime());
            e = new KeptHold(name, server, contended ? server.fencingToken() : tokens.reservedByGrant(server),
                    server.validFromNanos(sentAtNanos), new KeptHold.Watch());
            e.unreserved = tokens.reservesLater() && !contended;
            stale = entries.put(name, e);
            e.revoked = closed;
            e.lent = new LentGrant(e, server.fencingToken(), owner);
        }
        if (stale != null) {
            endStale(stale);
        }
        if (keepable(e)) {
            watch(e);
        } else {
            // Nothing to lend (a contender of another client waited, or asked shortly before): not kept.
            closeWatch(e);
        }
        return e.lent;
    }

    // ----- the holder's calls -------------------------------------------------------------------

    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        if (!(grant instanceof LentGrant lent)) {
            return driver.renew(grant, ttl);
        }
        KeptHold e = lent.entry();
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(false);
            }
        }
        long sentAt = time.nanoTime();
        return driver.renew(e.server, ttl).thenApply(renewed -> {
            synchronized (this) {
                if (Boolean.TRUE.equals(renewed) && sentAt - e.confirmedAtNanos > 0) {
                    e.confirmedAtNanos = sentAt;
                }
                return Boolean.TRUE.equals(renewed) && e.lent == lent;
            }
        });
    }

    /**
     * The holder released: the hold is parked for the next acquisition, or released on the server. The first
     * release after a grant may wait for the watch on contenders to be in place (one round trip, as long as a
     * release without caching takes).
     */
    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        if (!(grant instanceof LentGrant lent)) {
            return driver.release(grant);
        }
        KeptHold e = lent.entry();
        boolean waits;
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(false);
            }
            waits = waitsToKeep(e);
        }
        // park may call the driver: never with the monitor held.
        return waits ? ready(e, lent).thenCompose(v -> park(e, lent)) : park(e, lent);
    }

    /**
     * Called with the monitor held: the hold could be kept once its watch is in place and its block reserved
     * (never once a contender asked or the cache is closing: then nothing is worth waiting for).
     */
    private boolean waitsToKeep(KeptHold e) {
        return !closed && !e.revoked && keepable(e) && ((e.watch.watch == null && !e.watch.ended) || e.unreserved);
    }

    /**
     * Completes once the watch on {@code e}'s contenders is in place (or could not be) and, over a floor driver,
     * once the block is reserved (or could not be); never exceptionally. {@code lent} still holds it.
     */
    private CompletionStage<Void> ready(KeptHold e, LentGrant lent) {
        return e.watch.started.handle((w, error) -> null).thenCompose(v -> reserve(e, lent));
    }

    /**
     * Over a floor driver, the block's reservation while the server's hold is held: only a confirmed
     * reservation makes the block lendable; an unconfirmed one only makes later tokens larger.
     */
    private CompletionStage<Void> reserve(KeptHold e, LentGrant lent) {
        synchronized (this) {
            if (e.lent != lent || !e.unreserved) {
                return CompletableFuture.completedFuture(null);
            }
            if (!mayKeep(e, time.nanoTime())) {
                e.unreserved = false;
                return CompletableFuture.completedFuture(null);
            }
        }
        CompletionStage<Long> reserved;
        try {
            reserved = tokens.reserve(e.server);
        } catch (RuntimeException error) {
            reserved = CompletableFuture.failedFuture(error);
        }
        return reserved.handle((last, error) -> {
            if (error != null) {
                log.debug("could not reserve fencing tokens for lock '{}'; its hold is released, not kept", e.name, error);
            }
            synchronized (this) {
                e.unreserved = false;
                if (error == null) {
                    e.last = last;
                }
            }
            return null;
        });
    }

    /** Still lent to the releasing lease until here: the local queue lets no one take it before. */
    private CompletionStage<Boolean> park(KeptHold e, LentGrant lent) {
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(false);
            }
            e.lent = null;
            long now = time.nanoTime();
            if (mayLend(e, now) && entries.get(e.name) == e) {
                long until = Math.min(lingerNanos, e.confirmedAtNanos + freshNanos - now);
                e.linger = time.schedule(() -> lingered(e), until);
                return CompletableFuture.completedFuture(true);
            }
            entries.remove(e.name, e);
        }
        return endOnServer(e);
    }

    /** Releases on the server now, whatever the cache would do: a lost lease, a grant nobody will see. */
    CompletionStage<Boolean> end(Grant grant) {
        if (!(grant instanceof LentGrant lent)) {
            return driver.release(grant);
        }
        KeptHold e = lent.entry();
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(false);
            }
            e.lent = null;
            entries.remove(e.name, e);
        }
        return endOnServer(e);
    }

    /**
     * A contender of this client waits: it gets the block's next token without a round trip; after a
     * contender of another client asked, or with the block used up or stale, the server hands on.
     */
    @Override
    public CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl) {
        if (!(grant instanceof LentGrant lent)) {
            return driver instanceof HandOffDriver h ? h.handOff(grant, owner, ttl) : TokenReservation.releasedOnly(driver.release(grant));
        }
        KeptHold e = lent.entry();
        boolean waits;
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(HandOff.notOwner());
            }
            waits = waitsToKeep(e);
        }
        if (!waits) {
            return lendOrHandOn(e, lent, owner, ttl);
        }
        return ready(e, lent).thenCompose(v -> lendOrHandOn(e, lent, owner, ttl));
    }

    /** Lends to the local waiter from the block, or takes the hold out of the cache and lets the server hand on. */
    private CompletionStage<HandOff> lendOrHandOn(KeptHold e, LentGrant lent, String owner, Duration ttl) {
        synchronized (this) {
            if (e.lent != lent) {
                return CompletableFuture.completedFuture(HandOff.notOwner());
            }
            if (mayLend(e, time.nanoTime()) && entries.get(e.name) == e) {
                return CompletableFuture.completedFuture(HandOff.to(lend(e, owner)));
            }
            e.lent = null;
            entries.remove(e.name, e);
        }
        return handOnByServer(e, owner, ttl);
    }

    /** The block cannot lend: the server hands on (a hand-off driver) or only releases; {@code e} is out of the cache. */
    private CompletionStage<HandOff> handOnByServer(KeptHold e, String owner, Duration ttl) {
        if (!tokens.handsOn()) {
            // Only a release: its own delete must not read as a contender's on the watch.
            closeWatch(e);
        }
        long sentAt = time.nanoTime();
        return tokens.handOn(e.server, owner, ttl).whenComplete((handOff, error) -> {
            if (!(handOff instanceof HandOff.To)) {
                closeWatch(e);
            }
        }).thenApply(handOff -> {
            if (handOff instanceof HandOff.To to) {
                KeptHold next;
                KeptHold stale;
                synchronized (this) {
                    // The same watch goes on: the name stays this client's.
                    next = new KeptHold(e.name, to.next(), tokens.reservedByGrant(to.next()), to.next().validFromNanos(sentAt), e.watch);
                    next.revoked = closed;
                    next.lent = new LentGrant(next, to.next().fencingToken(), owner);
                    stale = entries.put(e.name, next);
                }
                if (stale != null) {
                    endStale(stale);
                }
                return HandOff.to(next.lent);
            }
            return handOff;
        });
    }

    // ----- contenders, lingering, closing -------------------------------------------------------

    /** A contender asked for {@code name}: a parked hold is released now, a lent one at its release. */
    private void asked(String name) {
        KeptHold ended;
        synchronized (this) {
            contenders.remember(name, time.nanoTime());
            KeptHold e = entries.get(name);
            if (e == null) {
                return;
            }
            e.revoked = true;
            if (e.lent != null) {
                return;
            }
            cancel(e);
            entries.remove(name);
            ended = e;
        }
        endOnServer(ended);
    }

    /** Cannot happen while the local queue lets one acquisition per name poll at a time; never leaked. */
    private void endStale(KeptHold stale) {
        log.warn("lock '{}' was granted while this client kept a hold of it; the older hold is released", stale.name);
        synchronized (this) {
            cancel(stale);
        }
        endOnServer(stale);
    }

    private void lingered(KeptHold e) {
        synchronized (this) {
            if (e.lent != null || !entries.remove(e.name, e)) {
                return;
            }
        }
        endOnServer(e);
    }

    /**
     * Stops keeping holds: every parked hold is released on the server, and a lent one will be at its release.
     *
     * @return completes when the parked holds' releases have
     */
    CompletableFuture<Void> stopKeeping() {
        List<KeptHold> parked = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (KeptHold e : List.copyOf(entries.values())) {
                e.revoked = true;
                if (e.lent == null) {
                    cancel(e);
                    entries.remove(e.name);
                    parked.add(e);
                }
            }
        }
        return CompletableFuture.allOf(parked.stream().map(e -> endOnServer(e).toCompletableFuture()
                .handle((r, error) -> null)).toArray(CompletableFuture[]::new));
    }

    // ----- the pieces ---------------------------------------------------------------------------

    /** Called with the monitor held. */
    private boolean mayLend(KeptHold e, long now) {
        return mayKeep(e, now) && e.next <= e.last;
    }

    /** Called with the monitor held: nothing but its block keeps {@code e} from lending. */
    private boolean mayKeep(KeptHold e, long now) {
        return !closed && !e.revoked && e.watch.watch != null && now - e.confirmedAtNanos < freshNanos;
    }

    /** Called with the monitor held: the hold has a block to lend from, or may still reserve one. */
    private static boolean keepable(KeptHold e) {
        return e.next <= e.last || e.unreserved;
    }

    /** Called with the monitor held. */
    private LentGrant lend(KeptHold e, String owner) {
        e.lent = new LentGrant(e, e.next++, owner);
        return e.lent;
    }

    /** Called with the monitor held. */
    private static void cancel(KeptHold e) {
        if (e.linger != null) {
            e.linger.cancel();
            e.linger = null;
        }
    }

    private void watch(KeptHold e) {
        CompletionStage<ContenderWatch> started;
        try {
            started = driver.watchContenders(e.name, e.server, () -> asked(e.name));
        } catch (RuntimeException error) {
            started = CompletableFuture.failedFuture(error);
        }
        started.whenComplete((w, error) -> {
            boolean keep = false;
            if (error != null) {
                log.debug("could not watch lock '{}' for contenders; its holds are released, not kept", e.name, error);
            } else {
                synchronized (this) {
                    keep = !e.watch.ended;
                    if (keep) {
                        e.watch.watch = w;
                    }
                }
                if (!keep) {
                    w.close();
                }
            }
            e.watch.started.complete(keep ? w : null);
        });
    }

    private void closeWatch(KeptHold e) {
        ContenderWatch w;
        synchronized (this) {
            e.watch.ended = true;
            w = e.watch.watch;
            e.watch.watch = null;
        }
        if (w != null) {
            w.close();
        }
    }

    /** Stops watching and releases the hold on the server (compare-and-delete: never anyone else's). */
    private CompletionStage<Boolean> endOnServer(KeptHold e) {
        closeWatch(e);
        CompletionStage<Boolean> released;
        try {
            released = driver.release(e.server);
        } catch (RuntimeException error) {
            released = CompletableFuture.failedFuture(error);
        }
        return released.whenComplete((removed, error) -> {
            if (error != null) {
                log.debug("could not release the kept hold of lock '{}'; it expires within its TTL", e.name, error);
            }
        });
    }

    long nanoTime() {
        return time.nanoTime();
    }

    /** Nothing: the client closes the driver, after {@link #stopKeeping()}. */
    @Override
    public void close() {
    }
}
