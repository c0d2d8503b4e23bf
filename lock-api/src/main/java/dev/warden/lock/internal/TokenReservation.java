package dev.warden.lock.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.TokenBlockDriver;
import dev.warden.lock.spi.TokenFloorDriver;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * How a {@link LeaseCache} reserves a kept hold's block of {@link #BLOCK} fencing tokens, by the driver it keeps
 * leases of: a {@link TokenBlockDriver}'s grants reserve it themselves (Redis: in the granting script); over any
 * other driver, which must be a {@link TokenFloorDriver}, the block is reserved after the grant, before its first
 * re-grant, through the token floor ({@link TokenFloorDriver#reserveTokens}) while the server's hold is held.
 * Stateless.
 */
sealed interface TokenReservation {

    /**
     * Tokens each server grant asks to reserve: at most one server grant per this many local ones (the driver
     * may reserve fewer).
     */
    int BLOCK = 1000;

    /**
     * The reservation {@code driver} allows.
     *
     * @throws IllegalArgumentException when it reserves tokens neither way (lock-api refuses such a
     *         configuration before: {@code CONFIGURATION})
     */
    static TokenReservation of(LeaseCachingDriver driver) {
        if (driver instanceof TokenBlockDriver blocks) {
            return new ByGrant(blocks);
        }
        if (driver instanceof TokenFloorDriver floors) {
            return new ByFloor(driver, floors);
        }
        throw new IllegalArgumentException("a caching driver reserves tokens in its grants or through its token floor: "
                + driver.getClass().getName());
    }

    /** A server attempt on {@code name} whose grant may be kept. */
    LockAttempt serverAttempt(String name, String owner);

    /** The last token {@code server} reserved with itself, never beyond the block: its own token when none. */
    long reservedByGrant(Grant server);

    /** Whether a grant's block is reserved later, by {@link #reserve}. */
    boolean reservesLater();

    /**
     * Reserves the block of {@code server}, which still holds its lock: completes with the block's last token,
     * or {@code server}'s own when nothing was reserved (the grant was gone); fails when it could not be told.
     */
    CompletionStage<Long> reserve(Grant server);

    /**
     * The kept hold {@code server} cannot lend to {@code owner}: the server hands the lock on to it in one step
     * (a new block reserved), or only releases it, leaving the waiter to poll.
     */
    CompletionStage<HandOff> handOn(Grant server, String owner, Duration ttl);

    /** Whether {@link #handOn} can grant the waiter in the same step (the name stays the client's, with its watch). */
    boolean handsOn();

    /** A release as a hand-off that handed nothing on: {@code ReleasedOnly}, or {@code NotOwner} when it removed nothing. */
    static CompletionStage<HandOff> releasedOnly(CompletionStage<Boolean> release) {
        return release.thenApply(removed -> Boolean.TRUE.equals(removed) ? HandOff.releasedOnly() : HandOff.notOwner());
    }

    /** Blocks reserved by the driver's grants and hand-offs. */
    record ByGrant(TokenBlockDriver driver) implements TokenReservation {

        @Override
        public LockAttempt serverAttempt(String name, String owner) {
            return driver.attemptReserving(name, owner, BLOCK);
        }

        @Override
        public long reservedByGrant(Grant server) {
            return Math.min(server.fencingToken() + BLOCK - 1, Math.max(server.fencingToken(), driver.lastReserved(server)));
        }

        @Override
        public boolean reservesLater() {
            return false;
        }

        @Override
        public CompletionStage<Long> reserve(Grant server) {
            return CompletableFuture.completedFuture(reservedByGrant(server));
        }

        @Override
        public CompletionStage<HandOff> handOn(Grant server, String owner, Duration ttl) {
            return driver.handOffReserving(server, owner, ttl, BLOCK);
        }

        @Override
        public boolean handsOn() {
            return true;
        }
    }

    /** Blocks reserved by raising the token floor before the first re-grant. */
    record ByFloor(LeaseCachingDriver driver, TokenFloorDriver floors) implements TokenReservation {

        @Override
        public LockAttempt serverAttempt(String name, String owner) {
            return driver.attemptKept(name, owner);
        }

        @Override
        public long reservedByGrant(Grant server) {
            return server.fencingToken();
        }

        @Override
        public boolean reservesLater() {
            return true;
        }

        /** Every later grant of the lock gets a token above the block's last once the floor is there. */
        @Override
        public CompletionStage<Long> reserve(Grant server) {
            long last = server.fencingToken() + BLOCK - 1;
            return floors.reserveTokens(server, BLOCK).thenApply(reserved -> Boolean.TRUE.equals(reserved) ? last : server.fencingToken());
        }

        @Override
        public CompletionStage<HandOff> handOn(Grant server, String owner, Duration ttl) {
            return releasedOnly(driver.release(server));
        }

        @Override
        public boolean handsOn() {
            return false;
        }
    }
}
