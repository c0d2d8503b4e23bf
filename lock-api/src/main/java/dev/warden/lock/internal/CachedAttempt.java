package dev.warden.lock.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An attempt on a lock while lease caching is on: a poll first asks the {@link LeaseCache} for a hold this
 * client keeps (granted at once, no round trip); otherwise it polls the server with an attempt that reserves
 * a block of tokens, and the cache adopts what the server grants.
 *
 * <p>Concurrency: lock-api's loop never calls two methods of one attempt at once; {@code server} is
 * volatile because successive calls may run on different threads.
 */
final class CachedAttempt implements LockAttempt {

    private final LeaseCache cache;
    private final String name;
    private final String owner;
    private volatile LockAttempt server;

    CachedAttempt(LeaseCache cache, String name, String owner) {
        this.cache = cache;
        this.name = name;
        this.owner = owner;
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        return cache.take(name, owner).thenCompose(kept -> kept != null
                ? CompletableFuture.completedFuture(Optional.of(kept)) : pollServer(ttl));
    }

    private CompletionStage<Optional<Grant>> pollServer(Duration ttl) {
        LockAttempt a = server;
        if (a == null) {
            a = cache.serverAttempt(name, owner);
            server = a;
        }
        long sentAt = cache.nanoTime();
        return a.poll(ttl).thenApply(granted -> granted.map(g -> cache.adopt(name, g, owner, sentAt)));
    }

    @Override
    public CompletionStage<Void> changed() {
        LockAttempt a = server;
        // Only a server poll can refuse, so there is an attempt to wait on.
        return a != null ? a.changed() : CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> abandon() {
        LockAttempt a = server;
        return a != null ? a.abandon() : CompletableFuture.completedFuture(null);
    }
}
