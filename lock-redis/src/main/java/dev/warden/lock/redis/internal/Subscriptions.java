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
 * Release channels on the driver's one pub/sub connection, counted by the attempts that listen,
 * so attempts on one name share a subscription and the last to leave unsubscribes. SUBSCRIBE and
 * UNSUBSCRIBE are sent while holding this object's lock, so they reach the server in the order the
 * counts changed and the server ends up subscribed exactly when someone listens. A channel the
 * server confirms or delivers that nobody listens to (a confirmation that came after its deadline,
 * Lettuce resubscribing after a reconnect what an unsent UNSUBSCRIBE left behind) is unsubscribed.
 *
 * <p>Concurrency: {@code channels} and {@code closed} are guarded by {@code this}; listeners are told
 * outside it.
 */
final class Subscriptions extends RedisPubSubAdapter<String, String> {

    private static final Logger log = LoggerFactory.getLogger(Subscriptions.class);

    private static final class Channel {
        final Set<RedisAttempt> listeners = new LinkedHashSet<>();
        CompletableFuture<Void> confirmed;
    }

    private final StatefulRedisPubSubConnection<String, String> connection;
    private final Map<String, Channel> channels = new HashMap<>();
    private boolean closed;

    Subscriptions(StatefulRedisPubSubConnection<String, String> connection) {
        this.connection = connection;
        connection.addListener(this);
    }

    /**
     * Adds a listener to a channel.
     *
     * @return completes once the server has confirmed the subscription
     */
    synchronized CompletableFuture<Void> join(String channel, RedisAttempt attempt) {
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
    synchronized void leave(String channel, RedisAttempt attempt) {
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
        List<RedisAttempt> attempts = new ArrayList<>();
        synchronized (this) {
            closed = true;
            channels.values().forEach(c -> attempts.addAll(c.listeners));
            channels.clear();
        }
        attempts.forEach(RedisAttempt::closed);
    }

    @Override
    public void message(String channel, String message) {
        List<RedisAttempt> attempts;
        synchronized (this) {
            Channel c = channels.get(channel);
            if (c == null) {
                dropStray(channel);
                return;
            }
            attempts = List.copyOf(c.listeners);
        }
        attempts.forEach(RedisAttempt::released);
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
        CompletableFuture<Void> sent;
        try {
            sent = (subscribe ? connection.async().subscribe(channel) : connection.async().unsubscribe(channel))
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        if (!subscribe) {
            sent.whenComplete((v, error) -> {
                if (error != null) {
                    log.debug("could not unsubscribe from {}; it is dropped when next confirmed or delivered", channel, error);
                }
            });
        }
        return sent;
    }
}
