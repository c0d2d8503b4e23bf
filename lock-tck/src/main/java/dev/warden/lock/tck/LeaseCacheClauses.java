package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases kept ({@code warden.lock.lease-cache}): a released lock stays held on the server for the client's
 * next acquisition, which takes it again with a higher token; any other client's contender ends it at once;
 * closing the client lets go of it. (Taken again with the server cut off: {@link LeaseCacheFaultClauses}.)
 */
abstract class LeaseCacheClauses {

    /** Kept this long at most, far beyond the kit's slack: a contender that gets in sooner ended the hold. */
    private static final Duration LONG_TTL = Duration.ofSeconds(30);

    private final LockKit kit;

    LeaseCacheClauses(LockKit kit) {
        this.kit = kit;
    }

    /** A client that keeps a released lock for up to a third of a long TTL. */
    private LockClient keeping() {
        return kit.client("ttl", LONG_TTL, "lease-cache", LONG_TTL.dividedBy(2));
    }

    @Test
    @DisplayName("a released lock is kept on the server and taken again at once, with a higher token")
    void takenAgain() {
        String name = kit.newName();
        LockClient keeper = keeping();
        Lease first = keeper.lock(name).acquire();
        assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(kit.onServer(name)).as("kept on the server").isTrue();
        Lease again = keeper.lock(name).tryAcquire(Duration.ZERO)
                .orElseThrow(() -> new AssertionError("the kept lock was not taken again at once"));
        assertThat(again.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(again.isValid()).isTrue();
        assertThat(again.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    @DisplayName("another client's contender ends a kept hold at once, and its token is above every token lent")
    void contenderEndsKeptHold() {
        String name = kit.newName();
        LockClient keeper = keeping();
        LockClient other = kit.client();
        Lease first = keeper.lock(name).acquire();
        first.release();
        Lease lent = keeper.lock(name).acquire();
        assertThat(lent.fencingToken()).isGreaterThan(first.fencingToken());
        lent.release();
        assertThat(kit.onServer(name)).as("kept on the server").isTrue();
        Lease next = other.lock(name).tryAcquire(kit.slack())
                .orElseThrow(() -> new AssertionError("the kept hold was not let go of for another client's contender"));
        assertThat(next.fencingToken()).isGreaterThan(lent.fencingToken());
        assertThat(keeper.lock(name).tryAcquire(Duration.ZERO)).as("the keeper while the other client holds").isEmpty();
        next.release();
    }

    @Test
    @DisplayName("a lent lease asked for by another client ends at its release: the lock goes to the contender")
    void askedLeaseEndsAtRelease() throws Exception {
        String name = kit.newName();
        LockClient keeper = keeping();
        LockClient other = kit.client();
        keeper.lock(name).acquire().release();
        Lease held = keeper.lock(name).acquire();
        CompletableFuture<Lease> waiter = other.lock(name).acquireAsync(kit.slack().multipliedBy(2));
        // Whether its poll reaches the server before the release (the lent lease is marked asked) or after (the
        // kept hold is let go of), the contender gets the lock within the slack, not after the hold's linger.
        assertThat(waiter).as("the contender while the keeper holds").isNotDone();
        held.release();
        Lease next = waiter.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(keeper.lock(name).tryAcquire(Duration.ZERO)).as("the keeper while the contender holds").isEmpty();
        next.release();
    }

    @Test
    @DisplayName("a lock granted while another client's contender waited is not kept: its release frees it at once")
    void notKeptWhileOthersWait() throws Exception {
        String name = kit.newName();
        LockClient keeper = keeping();
        LockClient other = kit.client();
        Lease held = keeper.lock(name).acquire();
        CompletableFuture<Lease> waiter = other.lock(name).acquireAsync(kit.slack().multipliedBy(2));
        held.release();
        waiter.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS).release();
        // The contender's poll that found the lock held marked the lock contended for a while: the keeper's next
        // grant reserves nothing to lend, so the next contender of another client finds the lock free.
        Lease again = keeper.lock(name).acquire();
        assertThat(again.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(kit.onServer(name)).as("kept on the server though another client waited").isFalse();
    }

    @Test
    @DisplayName("closing the client lets go of every kept hold before close returns")
    void closeLetsGo() {
        String name = kit.newName();
        LockClient keeper = keeping();
        keeper.lock(name).acquire().release();
        assertThat(kit.onServer(name)).as("kept on the server").isTrue();
        keeper.close();
        assertThat(kit.onServer(name)).as("left on the server after close").isFalse();
    }
}
