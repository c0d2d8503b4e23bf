package dev.warden.quota.spi;

import dev.warden.redis.internal.RedisFailures;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link LuaScript}s by digest ({@code EVALSHA}). A script the server refused before it ran is
 * sent again until the call's deadline (the request timeout): after {@code NOSCRIPT} (a
 * {@code SCRIPT FLUSH}, a restart, a failover to a node that never loaded it) as {@code EVAL} of the
 * source, which the node keeps; after {@code TRYAGAIN} (a slot being migrated), {@code CLUSTERDOWN},
 * {@code LOADING}, {@code MASTERDOWN}, {@code READONLY} (a demoted primary) or {@code BUSY}, with a
 * doubling backoff from 5 ms to 100 ms; on a Cluster also a command Lettuce rejected unsent while a
 * node's connection was being made. Every quota script declares its flags, so the server refuses it
 * before it starts or runs it whole: sending it again cannot apply it twice. What is still refused at
 * the deadline fails with the server's error (a missing script never reaches the caller as one: it is
 * answered with {@code EVAL}). Retries go through the loader's connection, which flushes on its own.
 *
 * <p>Thread-safe: immutable; each call's state lives in its own futures.
 */
public final class ScriptRunner {

    private static final long FIRST_RETRY_MILLIS = 5;
    private static final long MAX_RETRY_MILLIS = 100;

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
    public CompletableFuture<Void> loadAll(Collection<LuaScript> scripts) {
        List<CompletableFuture<?>> loads = new ArrayList<>();
        for (StatefulRedisConnection<String, String> primary : loader.primaries()) {
            for (LuaScript script : scripts) {
                loads.add(load(primary, script));
            }
        }
        return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new));
    }

    /** Runs {@code script} on {@code via}; a refusal is retried on the loader until the deadline. */
    public CompletableFuture<List<Object>> run(RedisConnection via, LuaScript script, String[] keys, String... args) {
        long deadline = System.nanoTime() + deadlineNanos;
        return attempt(via.async(), true, script, keys, args).exceptionallyCompose(error ->
                retry(error, script, keys, args, deadline, FIRST_RETRY_MILLIS));
    }

    /** Runs {@code script} on the loader's connection. */
    public CompletableFuture<List<Object>> run(LuaScript script, String[] keys, String... args) {
        return run(loader, script, keys, args);
    }

    private CompletableFuture<List<Object>> retry(Throwable error, LuaScript script, String[] keys, String[] args,
                                                  long deadline, long backoffMillis) {
        Throwable cause = RedisFailures.unwrap(error);
        if (cause instanceof RedisNoScriptException) {
            // EVAL cannot miss its script: run it from source at once, on the node that owns the keys.
            return attempt(loader.async(), false, script, keys, args).exceptionallyCompose(again ->
                    retry(again, script, keys, args, deadline, backoffMillis));
        }
        if (!refused(cause) || deadline - System.nanoTime() < TimeUnit.MILLISECONDS.toNanos(backoffMillis)) {
            return CompletableFuture.failedFuture(cause);
        }
        long next = Math.min(2 * backoffMillis, MAX_RETRY_MILLIS);
        return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(backoffMillis, TimeUnit.MILLISECONDS))
                .thenCompose(v -> attempt(loader.async(), true, script, keys, args))
                .exceptionallyCompose(again -> retry(again, script, keys, args, deadline, next));
    }

    private boolean refused(Throwable cause) {
        return RedisFailures.refusedBeforeRunning(cause, loader.isCluster());
    }

    private static CompletableFuture<List<Object>> attempt(RedisClusterAsyncCommands<String, String> commands, boolean byDigest,
                                                           LuaScript script, String[] keys, String... args) {
        try {
            return (byDigest ? commands.<List<Object>>evalsha(script.digest(), ScriptOutputType.MULTI, keys, args)
                    : commands.<List<Object>>eval(script.source(), ScriptOutputType.MULTI, keys, args)).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static CompletableFuture<String> load(StatefulRedisConnection<String, String> node, LuaScript script) {
        try {
            return node.async().scriptLoad(script.source()).toCompletableFuture().thenApply(digest -> {
                if (!script.digest().equals(digest)) {
                    throw new IllegalStateException("Redis computed digest " + digest + " for " + script.name()
                            + ", expected " + script.digest());
                }
                return digest;
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
