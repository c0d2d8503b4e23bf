package dev.warden.lock.redis.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lock scripts, loaded once with SCRIPT LOAD and run with EVALSHA so each call sends a
 * digest rather than the source. A NOSCRIPT reply (after SCRIPT FLUSH, a restart or a failover)
 * reloads the script and retries once.
 *
 * <p>Concurrency: the sources are read only after construction; the digests map is concurrent, and a
 * reload racing another only loads the same script twice.
 */
final class Scripts {

    enum Script {
        ACQUIRE("acquire.lua", ScriptOutputType.MULTI),
        RENEW("renew.lua", ScriptOutputType.INTEGER),
        RELEASE("release.lua", ScriptOutputType.INTEGER),
        HAND_OFF("handoff.lua", ScriptOutputType.MULTI);

        final String resource;
        final ScriptOutputType output;

        Script(String resource, ScriptOutputType output) {
            this.resource = resource;
            this.output = output;
        }
    }

    private final RedisAsyncCommands<String, String> commands;
    private final Map<Script, String> sources = new EnumMap<>(Script.class);
    private final Map<Script, String> digests = new ConcurrentHashMap<>();

    Scripts(RedisAsyncCommands<String, String> commands) {
        this.commands = commands;
        for (Script script : Script.values()) {
            sources.put(script, read(script.resource));
        }
    }

    /** Loads every script; the driver waits for it while connecting. */
    CompletableFuture<Void> loadAll() {
        return CompletableFuture.allOf(sources.keySet().stream().map(this::load).toArray(CompletableFuture[]::new));
    }

    /**
     * How long an acquire that found the lock held keeps hand-offs off: longer than the longest
     * wait between a waiter's polls ({@link RedisAttempt#MAX_BACKOFF_MILLIS}), so it stays set
     * for as long as anyone keeps waiting.
     */
    static final long WAITING_MARKER_MILLIS = 2 * RedisAttempt.MAX_BACKOFF_MILLIS + 500;

    /** {@code {granted (1/0), token or holder's PTTL}}. */
    CompletableFuture<List<Object>> acquire(Keys keys, String owner, long ttlMillis) {
        return run(Script.ACQUIRE, new String[] {keys.lock(), keys.fence(), keys.waiting()}, owner,
                Long.toString(ttlMillis), Long.toString(WAITING_MARKER_MILLIS));
    }

    /** {@code {1, token}} handed on, {@code {2, 0}} only released, {@code {0, 0}} no longer {@code value}. */
    CompletableFuture<List<Object>> handOff(Keys keys, String value, String nextOwner, long ttlMillis) {
        return run(Script.HAND_OFF, new String[] {keys.lock(), keys.fence(), keys.waiting()}, value, nextOwner,
                Long.toString(ttlMillis), keys.channel());
    }

    /** 1 when extended, 0 when the lock no longer holds {@code value}. */
    CompletableFuture<Long> renew(Keys keys, String value, long ttlMillis) {
        return run(Script.RENEW, new String[] {keys.lock()}, value, Long.toString(ttlMillis));
    }

    /** 1 when deleted (and published), 0 when the lock no longer holds {@code value}. */
    CompletableFuture<Long> release(Keys keys, String value) {
        return run(Script.RELEASE, new String[] {keys.lock()}, value, keys.channel());
    }

    private <T> CompletableFuture<T> run(Script script, String[] keys, String... args) {
        String digest = digests.get(script);
        CompletableFuture<T> first = digest == null ? load(script).thenCompose(d -> evalsha(script, d, keys, args))
                : evalsha(script, digest, keys, args);
        return first.exceptionallyCompose(error -> Calls.unwrap(error) instanceof RedisNoScriptException
                ? load(script).thenCompose(d -> evalsha(script, d, keys, args))
                : CompletableFuture.failedFuture(error));
    }

    private <T> CompletableFuture<T> evalsha(Script script, String digest, String[] keys, String... args) {
        try {
            return commands.<T>evalsha(digest, script.output, keys, args).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<String> load(Script script) {
        CompletableFuture<String> loaded;
        try {
            loaded = commands.scriptLoad(sources.get(script)).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return loaded.thenApply(digest -> {
            digests.put(script, digest);
            return digest;
        });
    }

    private static String read(String resource) {
        try (InputStream in = Scripts.class.getResourceAsStream("/dev/warden/lock/redis/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + resource, e);
        }
    }
}
