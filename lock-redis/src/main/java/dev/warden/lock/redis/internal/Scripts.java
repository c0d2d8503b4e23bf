package dev.warden.lock.redis.internal;

import dev.warden.redis.internal.RedisScript;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The lock scripts, run by digest ({@link RedisScript#call}: EVAL of the source after NOSCRIPT, on
 * the node that owns the keys). (What is refused before it runs is retried by {@link Calls} until the
 * call's deadline.) On a Cluster, release messages go out with SPUBLISH, in
 * the lock's own shard. The {@code shared-*} scripts keep shared names' queues ({@link SharedKeys}).
 *
 * <p>Concurrency: immutable after construction.
 */
final class Scripts {

    enum Script {
        ACQUIRE("acquire.lua", ScriptOutputType.MULTI),
        RENEW("renew.lua", ScriptOutputType.INTEGER),
        RELEASE("release.lua", ScriptOutputType.INTEGER),
        HAND_OFF("handoff.lua", ScriptOutputType.MULTI),
        FLOOR("floor.lua", ScriptOutputType.INTEGER),
        EPOCH("epoch.lua", ScriptOutputType.INTEGER),
        READ("read.lua", ScriptOutputType.VALUE),
        EVICT("evict.lua", ScriptOutputType.INTEGER),
        SHARED_POLL("shared-poll.lua", ScriptOutputType.MULTI),
        SHARED_RENEW("shared-renew.lua", ScriptOutputType.INTEGER),
        SHARED_RELEASE("shared-release.lua", ScriptOutputType.INTEGER);

        final String resource;
        final ScriptOutputType output;

        Script(String resource, ScriptOutputType output) {
            this.resource = resource;
            this.output = output;
        }
    }

    /**
     * How long an acquire that found the lock held keeps hand-offs off: longer than the longest
     * wait between a waiter's polls ({@link RedisAttempt#MAX_BACKOFF_MILLIS}), so it stays set
     * for as long as anyone keeps waiting.
     */
    static final long WAITING_MARKER_MILLIS = 2 * RedisAttempt.MAX_BACKOFF_MILLIS + 500;

    private static final Map<Script, RedisScript> SCRIPTS = new EnumMap<>(Script.class);

    static {
        for (Script script : Script.values()) {
            SCRIPTS.put(script, RedisScript.read(Scripts.class, "/dev/warden/lock/redis/" + script.resource, script.output));
        }
    }

    private final RedisScriptingAsyncCommands<String, String> commands;
    private final String publish;

    Scripts(RedisScriptingAsyncCommands<String, String> commands, Topology.Channels channels) {
        this.commands = commands;
        this.publish = channels.publish;
    }

    /** Loads every script (on every node of a Cluster); the driver waits for it while connecting. */
    CompletableFuture<Void> loadAll() {
        return CompletableFuture.allOf(SCRIPTS.values().stream().map(script -> script.load(commands))
                .toArray(CompletableFuture[]::new));
    }

    /** The SHA-1 digest EVALSHA names. */
    static String digest(Script script) {
        return SCRIPTS.get(script).digest();
    }

    /**
     * {@code {1, token, last token reserved}} granted, {@code {0, holder's PTTL, 0}} held; a grant reserves up to
     * {@code tokens} tokens from its own.
     */
    CompletableFuture<List<Object>> acquire(Keys keys, String owner, long ttlMillis, int tokens) {
        return run(Script.ACQUIRE, new String[] {keys.lock(), keys.fence(), keys.waiting()}, owner,
                Long.toString(ttlMillis), Long.toString(WAITING_MARKER_MILLIS), Integer.toString(tokens),
                keys.contenders(), publish);
    }

    /** {@code {1, token, last reserved}} handed on, {@code {2, 0, 0}} only released, {@code {0, 0, 0}} no longer {@code value}. */
    CompletableFuture<List<Object>> handOff(Keys keys, String value, String nextOwner, long ttlMillis, int tokens) {
        return run(Script.HAND_OFF, new String[] {keys.lock(), keys.fence(), keys.waiting()}, value, nextOwner,
                Long.toString(ttlMillis), keys.channel(), publish, Integer.toString(tokens));
    }

    /** 1 when extended, 0 when the lock no longer holds {@code value}. */
    CompletableFuture<Long> renew(Keys keys, String value, long ttlMillis) {
        return run(Script.RENEW, new String[] {keys.lock()}, value, Long.toString(ttlMillis));
    }

    /** 1 when deleted (and published), 0 when the lock no longer holds {@code value}. */
    CompletableFuture<Long> release(Keys keys, String value) {
        return run(Script.RELEASE, new String[] {keys.lock()}, value, keys.channel(), publish);
    }

    /** 1 when the fence is at least {@code floor}, 0 when the lock no longer holds {@code value}. */
    CompletableFuture<Long> raiseFloor(Keys keys, String value, long floor) {
        return run(Script.FLOOR, new String[] {keys.lock(), keys.fence()}, value, Long.toString(floor));
    }

    /** The fencing epoch recorded in {@code key} before; records {@code epoch} when it is higher. */
    CompletableFuture<Long> recordEpoch(String key, int epoch) {
        return run(Script.EPOCH, new String[] {key}, Integer.toString(epoch));
    }

    /** The value of {@code key}: a lock's {@code owner:token} while held, an evicted key's token; null when absent. */
    CompletableFuture<String> read(String key) {
        return run(Script.READ, new String[] {key});
    }

    /** 1 when the hold with {@code token} was ended (and published), 0 when the lock is free or another's. */
    CompletableFuture<Long> evict(Keys keys, long token, long markMillis) {
        return run(Script.EVICT, new String[] {keys.lock(), keys.evicted()}, Long.toString(token), Long.toString(markMillis),
                keys.channel(), publish);
    }

    /**
     * {@code {1, token, -1}} granted; {@code {0, token, ms until the soonest expiry ahead}} waiting. The entry
     * is made on the first poll and whenever it had expired.
     */
    CompletableFuture<List<Object>> sharedPoll(SharedKeys keys, String id, int weight, int limit, long ttlMillis) {
        return run(Script.SHARED_POLL, new String[] {keys.queue(), keys.entries(), keys.fence()}, id,
                Integer.toString(weight), Integer.toString(limit), Long.toString(ttlMillis), keys.channel(), publish);
    }

    /** 1 when extended, 0 when the entry is gone, expired or not granted under {@code token}. */
    CompletableFuture<Long> sharedRenew(SharedKeys keys, String id, long token, long ttlMillis) {
        return run(Script.SHARED_RENEW, new String[] {keys.queue(), keys.entries()}, id, Long.toString(token),
                Long.toString(ttlMillis), keys.channel(), publish);
    }

    /**
     * 1 when the live entry was removed (and published), 0 when it was gone, expired or under another token.
     *
     * @param token the grant's token; 0 for the entry whatever its token (abandoning)
     */
    CompletableFuture<Long> sharedRelease(SharedKeys keys, String id, long token) {
        return run(Script.SHARED_RELEASE, new String[] {keys.queue(), keys.entries()}, id, Long.toString(token),
                keys.channel(), publish);
    }

    private <T> CompletableFuture<T> run(Script script, String[] keys, String... args) {
        return SCRIPTS.get(script).call(commands, commands, keys, args);
    }
}
