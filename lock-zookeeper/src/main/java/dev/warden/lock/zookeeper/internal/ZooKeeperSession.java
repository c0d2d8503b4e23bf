package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The client's ZooKeeper session as the lease of every grant: Curator's connection states, in
 * order, become an epoch and a connected flag. By default (Curator tech note 14) SUSPENDED already
 * ends the epoch, because from then on this client cannot know whether its session still lives;
 * {@code lost-on=lost} waits for LOST. Each loss starts a new epoch: a grant from an older epoch
 * never renews again, even after RECONNECTED, and the driver is told so it can end every lease.
 *
 * <p>Concurrency: {@link #stateChanged} runs on the driver's one thread only, in between the
 * admissions of grants ({@link Calls#inOrder}); {@code epoch},
 * {@code connected} and the listener are volatile for the threads that read them.
 */
final class ZooKeeperSession {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperSession.class);

    /** Which connection state ends every lease. */
    enum LostOn {
        SUSPENDED, LOST;

        static LostOn parse(String value) {
            return LostOn.valueOf(value.trim().toUpperCase(Locale.ROOT));
        }
    }

    private final String servers;
    private final LostOn lostOn;
    /** Completes when the driver thread has seen the first CONNECTED. */
    private final CompletableFuture<Void> firstConnected = new CompletableFuture<>();
    private final Runnable interruptWaiters;
    private volatile long epoch;
    private volatile boolean connected;
    private volatile Consumer<Throwable> lost = cause -> { };

    /** @param interruptWaiters wakes every waiting attempt when the session itself is gone */
    ZooKeeperSession(String servers, LostOn lostOn, Runnable interruptWaiters) {
        this.servers = servers;
        this.lostOn = lostOn;
        this.interruptWaiters = interruptWaiters;
    }

    LostOn lostOn() {
        return lostOn;
    }

    /** The current epoch: a grant counts only within the epoch it was made in. */
    long epoch() {
        return epoch;
    }

    boolean isConnected() {
        return connected;
    }

    CompletableFuture<Void> firstConnected() {
        return firstConnected;
    }

    /** The one listener told when an epoch ends (every grant of it is lost). */
    void onLost(Consumer<Throwable> listener) {
        lost = listener;
    }

    /** On the driver thread, in the order Curator reports them. */
    void stateChanged(ConnectionState state) {
        log.debug("ZooKeeper connection to {}: {}", servers, state);
        switch (state) {
            case CONNECTED, RECONNECTED -> {
                connected = true;
                firstConnected.complete(null);
            }
            case SUSPENDED, READ_ONLY -> {
                connected = false;
                if (lostOn == LostOn.SUSPENDED) {
                    endEpoch("the connection to ZooKeeper at " + servers + " was suspended");
                }
            }
            case LOST -> {
                connected = false;
                endEpoch("the ZooKeeper session at " + servers + " was lost");
                interruptWaiters.run();
            }
        }
    }

    private void endEpoch(String why) {
        epoch++;
        try {
            lost.accept(new LockException(LockException.Reason.UNAVAILABLE, why));
        } catch (RuntimeException e) {
            log.warn("session-lost listener for {} failed", servers, e);
        }
    }
}
