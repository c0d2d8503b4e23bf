package dev.warden.redis.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import java.util.concurrent.CompletableFuture;

/**
 * One Lua script as Warden sends it: its source, the SHA-1 digest {@code EVALSHA} names it by (computed
 * here, so a call never sends the source unless the server lacks it) and the reply type. A
 * {@code NOSCRIPT} reply (after {@code SCRIPT FLUSH}, a restart, a failover to a node that never loaded
 * it) runs the same call at once as {@code EVAL} of the source, which the node then keeps: one more round
 * trip on the node that owns the keys, however often the cache is flushed. What else the server refuses
 * before running is {@link RetryWhileRefused}'s business. Immutable.
 */
public final class RedisScript {

    private final String name;
    private final String source;
    private final String digest;
    private final ScriptOutputType output;

    private RedisScript(String name, String source, ScriptOutputType output) {
        this.name = name;
        this.source = source;
        this.digest = ScriptText.digest(source);
        this.output = output;
    }

    /** @param name for messages (its file name, say) */
    public static RedisScript of(String name, String source, ScriptOutputType output) {
        return new RedisScript(name, source, output);
    }

    /**
     * The script in a resource.
     *
     * @param anchor   a class whose module holds the resource
     * @param resource an absolute resource path
     * @throws IllegalStateException when it is missing
     */
    public static RedisScript read(Class<?> anchor, String resource, ScriptOutputType output) {
        return of(resource.substring(resource.lastIndexOf('/') + 1), ScriptText.read(anchor, resource), output);
    }

    /**
     * {@code EVALSHA} on {@code commands}; after {@code NOSCRIPT}, {@code EVAL} of the source on
     * {@code onNoScript} (the same connection, or one that flushes on its own when {@code commands} is
     * being batched).
     */
    public <T> CompletableFuture<T> call(RedisScriptingAsyncCommands<String, String> commands,
                                         RedisScriptingAsyncCommands<String, String> onNoScript, String[] keys,
                                         String... args) {
        return this.<T>send(commands, true, keys, args).exceptionallyCompose(error ->
                RedisFailures.unwrap(error) instanceof RedisNoScriptException
                        ? send(onNoScript, false, keys, args)
                        : CompletableFuture.failedFuture(error));
    }

    /** {@code SCRIPT LOAD}, failing when the server computes another digest than this side did. */
    public CompletableFuture<String> load(RedisScriptingAsyncCommands<String, String> commands) {
        try {
            return commands.scriptLoad(source).toCompletableFuture().thenApply(loaded -> {
                if (!digest.equals(loaded)) {
                    throw new IllegalStateException("Redis computed digest " + loaded + " for " + name + ", expected " + digest);
                }
                return loaded;
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private <T> CompletableFuture<T> send(RedisScriptingAsyncCommands<String, String> commands, boolean byDigest,
                                          String[] keys, String... args) {
        try {
            return (byDigest ? commands.<T>evalsha(digest, output, keys, args)
                    : commands.<T>eval(source, output, keys, args)).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The file name, for messages. */
    public String name() {
        return name;
    }

    /** The full source, as sent with {@code SCRIPT LOAD} or {@code EVAL}. */
    public String source() {
        return source;
    }

    /** The lower-case hex SHA-1 {@code EVALSHA} names. */
    public String digest() {
        return digest;
    }

    @Override
    public String toString() {
        return name;
    }
}
