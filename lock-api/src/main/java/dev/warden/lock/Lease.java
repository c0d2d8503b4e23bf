package dev.warden.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Proof of holding a lock, until it is released or lost. A lease is a value: it may be handed to
 * another thread and released there.
 *
 * <p>Validity is a deadline on the local monotonic clock, counted from when the acquire or the
 * last successful renewal was <em>sent</em>, less an allowance for clock drift (1% of the TTL plus
 * 2 ms), so the holder stops believing it holds the lock no later than the server lets it expire.
 * While the lease is held a keeper renews it every TTL/3. The lease is lost when a renewal finds
 * another owner, when its session ends, when its maximum hold time passes, or when the deadline
 * passes without a confirmed renewal (a renewal answered after the deadline does not revive it).
 * The keeper's timer notices a passed deadline within milliseconds; {@link #isValid()} notices it
 * at the moment it is called, whichever comes first, so a lease never reads valid past its
 * deadline, not even right after a process pause.
 *
 * <p>Each acquisition returns its own lease object; for a reentrant acquisition the objects share
 * the lock, its token and its validity, and the lock is released on the server when the last of
 * them is released.
 *
 * <p>A lease that is never released is renewed until its client closes; closing the client
 * releases it and tells its listeners ({@link LostReason#CLIENT_CLOSED}).
 */
public interface Lease extends AutoCloseable {

    /** The lock name. */
    String name();

    /**
     * The fencing token: strictly increasing with each grant of this name, across all clients.
     * Pass it to the guarded resource so it can reject writes from a holder that was superseded.
     */
    long fencingToken();

    /**
     * Whether the holder may still rely on the lease: the moment of truth. A lease past its deadline
     * is marked lost here, if the keeper has not done so yet, and every {@link #onLost} listener
     * registered before the loss has run, once, before this returns {@code false} (unless it is
     * called on Warden's event thread, from a listener, where they run after the current one).
     */
    boolean isValid();

    /** Time left until the local validity deadline; zero once invalid. */
    Duration remaining();

    /** The wall-clock estimate of the validity deadline (the monotonic deadline is what counts). */
    Instant expiresAt();

    /**
     * Registers a listener told once when this lease is lost (never on an orderly release). Runs
     * on Warden's event thread, within milliseconds of the loss, and in any case before
     * {@link #isValid()} returns {@code false} for it; a listener added after the loss runs
     * immediately there. Listeners must be quick: they share one thread per client.
     */
    void onLost(Consumer<LeaseLost> listener);

    /**
     * Moves this lease's maximum hold time to {@code fromNow} from now, earlier or later than the limit
     * it had ({@link DistributedLock#withMaxHoldTime}, the client's default, or none): when it passes, the
     * keeper stops renewing, releases the lock and reports the lease lost with
     * {@link LostReason#MAX_HOLD_TIME}, as for a limit set at the acquisition. Zero ends the hold so now.
     * Reentrant holds share one lease on the server, so they share the new limit.
     *
     * @return false when the lease is no longer held (released, lost, or past a deadline); it is then
     *         not revived
     * @throws IllegalArgumentException when {@code fromNow} is null or negative
     */
    boolean setMaxHoldTime(Duration fromNow);

    /**
     * Releases this hold {@code delay} from now rather than now: until then the lease stays held and
     * renewed, then it is released as by {@link #release()}, an orderly end that tells no loss. For holds
     * that must last a minimum time, such as a scheduled job's lock that keeps other nodes from running it
     * again within the period (ShedLock's "lock at least for"). A loss, a maximum hold time that passes
     * first, or the client's close ends it earlier, as for any lease; {@link #release()} meanwhile releases
     * at once. Zero releases now, without waiting for the server.
     *
     * @return false when this hold was already released or the lease lost
     * @throws IllegalArgumentException when {@code delay} is null or negative
     */
    boolean releaseAfter(Duration delay);

    /**
     * Releases this hold. Idempotent. The server-side lock is removed with a compare-and-delete on
     * this lease's token, so a lost lease never removes a newer holder's lock.
     *
     * @throws LockException with {@link LockException.Reason#UNAVAILABLE} when the server could not
     *         confirm the release; the lock then expires after its TTL, as renewal has stopped
     */
    ReleaseOutcome release();

    /**
     * {@link #release()} without blocking, for asynchronous code; completes on a Warden thread, with
     * {@code ALREADY_RELEASED} when this lease was released before.
     */
    CompletionStage<ReleaseOutcome> releaseAsync();

    /** Same as {@link #release()}; a lost lease is logged at warning level. */
    @Override
    void close();
}
