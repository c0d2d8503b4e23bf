package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Wake-up channels (a lock's releases, a shared name's changes) on the driver's one pub/sub
 * connection — plain channels, or sharded ones on a Cluster (SSUBSCRIBE, routed to the node that owns
 * the channel's slot) — counted by the attempts that listen ({@link ChannelWait}s), so attempts on one
 * name share a subscription and the last to leave unsubscribes. SUBSCRIBE and UNSUBSCRIBE are sent
 * while holding this object's lock, so they reach the server in the order the counts changed and the
 * server ends up subscribed exactly when someone listens. A channel the server confirms or delivers
 * that nobody listens to (a confirmation that came after its deadline, Lettuce resubscribing after a
 * reconnect what an unsent UNSUBSCRIBE left behind) is unsubscribed.
 *
 * <p>A sharded subscription lives on one node: when the server drops it (its slot moved away) or the
 * driver sees the cluster's topology change (a failover), it is sent again, and lands where the slot
 * is now; SSUBSCRIBE of a channel already subscribed is harmless.
 *
 * <p>Concurrency: {@code channels} and {@code closed} are guarded by {@code this}; listeners are told
 * outside it.
 */
final class Subscriptions extends RedisPubSubAdapter<String, String> {

    private static final Logger log = LoggerFactory.getLogger(Subscriptions.class);

    /** Who listens on a channel: a contender's wait, or a lease cache's contender watch. */
    interface Listener {

        /** A message was published; called on the pub/sub connection's thread: must not block. */
        void message();

        /** The driver closed. */
        void closed();
    }

    private static final class Channel {
        final Set<Listener> listeners = new LinkedHashSet<>();
        CompletableFuture<Void> confirmed;
    }

    private final StatefulRedisPubSubConnection<String, String> connection;
    private final boolean sharded;
    private final Calls calls;
    private final Map<String, Channel> channels = new HashMap<>();
    private boolean closed;

    /** @param calls bounds subscribing, and retries one refused or sent before its node's connection was up */
    Subscriptions(StatefulRedisPubSubConnection<String, String> connection, Topology.Channels kind, Calls calls) {
        this.connection = connection;
        this.sharded = kind == Topology.Channels.SHARDED;
        this.calls = calls;
        connection.addListener(this);
    }

    /**
     * Adds a listener to a channel.
     *
     * @return completes once the server has confirmed the subscription
     */
    synchronized CompletableFuture<Void> join(String channel, Listener attempt) {
        if (closed) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CLOSED, "the lock client is closed"));
        }
        Channel c = channels.computeIfAbsent(channel, k -> new Channel());
        c.listeners.add(attempt);
        if (c.confirmed == null || c.confirmed.isCompletedExceptionally()) {
            c.confirmed = send(Command.SUBSCRIBE, channel);
        }
        return c.confirmed;
    }

    /** Removes a listener; the last one unsubscribes. */
    synchronized void leave(String channel, Listener attempt) {
        Channel c = channels.get(channel);
        if (c == null || !c.listeners.remove(attempt) || !c.listeners.isEmpty()) {
            return;
        }
        channels.remove(channel);
        if (!closed) {
            send(Command.UNSUBSCRIBE, channel);
        }
    }

    /** Tells every listener that the driver closed; nothing is sent, the connection is closing. */
    void close() {
        List<Listener> attempts = new ArrayList<>();
        synchronized (this) {
            closed = true;
            channels.values().forEach(c -> attempts.addAll(c.listeners));
            channels.clear();
        }
        attempts.forEach(Listener::closed);
    }

    /** Sends every listened channel's subscription again (after a topology change). */
    synchronized void resubscribeAll() {
        if (closed) {
            return;
        }
        for (Map.Entry<String, Channel> e : channels.entrySet()) {
            log.debug("subscribing to {} again after a topology change", e.getKey());
            e.getValue().confirmed = send(Command.SUBSCRIBE, e.getKey());
        }
    }

    @Override
    public void smessage(String channel, String message) {
        message(channel, message);
    }

    @Override
    public void ssubscribed(String channel, long count) {
        subscribed(channel, count);
    }

    /** The server dropped a sharded subscription (its slot moved): still listened to, it is sent again. */
    @Override
    public void sunsubscribed(String channel, long count) {
        synchronized (this) {
            Channel c = channels.get(channel);
            if (c != null && !closed) {
                c.confirmed = send(Command.SUBSCRIBE, channel);
            }
        }
    }

    @Override
    public void message(String channel, String message) {
        List<Listener> attempts;
        synchronized (this) {
            Channel c = channels.get(channel);
            if (c == null) {
                dropStray(channel);
                return;
            }
            attempts = List.copyOf(c.listeners);
        }
        attempts.forEach(Listener::message);
    }

    @Override
    public void subscribed(String channel, long count) {
        synchronized (this) {
            if (!channels.containsKey(channel)) {
                dropStray(channel);
            }
        }
    }

    private void dropStray(String channel) {
        if (!closed) {
            send(Command.UNSUBSCRIBE, channel);
        }
    }

    private enum Command { SUBSCRIBE, UNSUBSCRIBE }

    private CompletableFuture<Void> send(Command command, String channel) {
        boolean subscribe = command == Command.SUBSCRIBE;
        CompletableFuture<Void> sent = subscribe
                ? calls.retrying("the subscription to " + channel, () -> sendOnce(true, channel), late -> { })
                : sendOnce(false, channel);
        if (!subscribe) {
            sent.whenComplete((v, error) -> {
                if (error != null) {
                    log.debug("could not unsubscribe from {}; it is dropped when next confirmed or delivered", channel, error);
                }
            });
        }
        return sent;
    }

    private CompletableFuture<Void> sendOnce(boolean subscribe, String channel) {
        try {
            var async = connection.async();
            return (sharded ? (subscribe ? async.ssubscribe(channel) : async.sunsubscribe(channel))
                    : (subscribe ? async.subscribe(channel) : async.unsubscribe(channel))).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
