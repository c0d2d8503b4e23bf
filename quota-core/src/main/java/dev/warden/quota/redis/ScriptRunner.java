package dev.warden.quota.redis;

import dev.warden.redis.internal.RedisScript;
import dev.warden.redis.internal.RetryWhileRefused;
import io.lettuce.core.api.StatefulRedisConnection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Runs the quota engine's and the ledger's scripts by digest ({@link RedisScript#call}: {@code EVAL} of
 * the source after {@code NOSCRIPT}), sending a script the server refused before it ran again until the
 * call's deadline, the request timeout ({@link RetryWhileRefused}); on a Cluster also a command Lettuce
 * rejected unsent while a node's connection was being made. Retries and {@code EVAL}s go through the
 * loader's connection, which flushes on its own.
 *
 * <p>Thread-safe: immutable; each call's state lives in its own futures.
 */
public final class ScriptRunner {

    private final RedisConnection loader;
    private final long deadlineNanos;

    /**
     * @param loader   the connection that loads scripts and runs retries (it flushes on its own)
     * @param deadline how long a call keeps sending a refused script again: the request timeout
     */
    public ScriptRunner(RedisConnection loader, Duration deadline) {
        this.loader = loader;
        this.deadlineNanos = deadline.toNanos();
    }

    /** Loads every script on every primary, and checks that Redis computes the digests this side did. */
    public CompletableFuture<Void> loadAll(Collection<RedisScript> scripts) {
        List<CompletableFuture<?>> loads = new ArrayList<>();
        for (StatefulRedisConnection<String, String> primary : loader.primaries()) {
            for (RedisScript script : scripts) {
                loads.add(script.load(primary.async()));
            }
        }
        return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new));
    }

    /** Runs {@code script} on {@code via}; a refusal is retried on the loader until the deadline. */
    public CompletableFuture<List<Object>> run(RedisConnection via, RedisScript script, String[] keys, String... args) {
        return RetryWhileRefused.run(attempt -> script.call(attempt == 0 ? via.async() : loader.async(), loader.async(),
                keys, args), loader.isCluster(), System.nanoTime() + deadlineNanos, RetryWhileRefused.Delay.common(), e -> { });
    }

    /** Runs {@code script} on the loader's connection. */
    public CompletableFuture<List<Object>> run(RedisScript script, String[] keys, String... args) {
        return run(loader, script, keys, args);
    }
}
