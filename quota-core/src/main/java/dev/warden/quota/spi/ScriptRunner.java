package dev.warden.quota.spi;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Runs {@link LuaScript}s by digest. A {@code NOSCRIPT} reply (after {@code SCRIPT FLUSH}, a
 * restart or a failover) loads the script again and retries once on the loader's connection.
 */
public final class ScriptRunner {

    private final RedisAsyncCommands<String, String> loader;

    /** @param loader the connection that loads scripts and runs retries (it flushes on its own) */
    public ScriptRunner(RedisAsyncCommands<String, String> loader) {
        this.loader = loader;
    }

    /** Loads every script. */
    public CompletableFuture<Void> loadAll(Collection<LuaScript> scripts) {
        return CompletableFuture.allOf(scripts.stream().map(this::load).toArray(CompletableFuture[]::new));
    }

    /** Runs {@code script} on {@code via}; on {@code NOSCRIPT} loads it and retries once on the loader. */
    public CompletableFuture<List<Object>> run(RedisAsyncCommands<String, String> via, LuaScript script, String[] keys,
                                               String... args) {
        return evalsha(via, script, keys, args).exceptionallyCompose(error ->
                unwrap(error) instanceof RedisNoScriptException
                        ? load(script).thenCompose(digest -> evalsha(loader, script, keys, args))
                        : CompletableFuture.failedFuture(error));
    }

    /** Runs {@code script} on the loader's connection. */
    public CompletableFuture<List<Object>> run(LuaScript script, String[] keys, String... args) {
        return run(loader, script, keys, args);
    }

    private static CompletableFuture<List<Object>> evalsha(RedisAsyncCommands<String, String> commands, LuaScript script,
                                                           String[] keys, String... args) {
        try {
            return commands.<List<Object>>evalsha(script.digest(), ScriptOutputType.MULTI, keys, args).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<String> load(LuaScript script) {
        try {
            return loader.scriptLoad(script.source()).toCompletableFuture().thenApply(digest -> {
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

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
