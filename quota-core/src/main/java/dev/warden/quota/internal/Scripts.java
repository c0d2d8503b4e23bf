package dev.warden.quota.internal;

import dev.warden.quota.redis.ScriptPrelude;
import dev.warden.redis.internal.RedisScript;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** The engine's scripts, one per operation (the ledger has its own). */
public final class Scripts {

    /** The operations. */
    public enum Script {
        OPEN("open.lua"),
        CREDIT("credit.lua"),
        DEDUCT("deduct.lua"),
        BALANCE("balance.lua"),
        HOLDS("holds.lua"),
        POST("post.lua"),
        BALANCES("balances.lua"),
        BUCKETS("buckets.lua");

        final String resource;

        Script(String resource) {
            this.resource = resource;
        }
    }

    private static final Map<Script, RedisScript> SCRIPTS = new EnumMap<>(Script.class);

    static {
        for (Script script : Script.values()) {
            SCRIPTS.put(script, ScriptPrelude.load(Scripts.class, "/dev/warden/quota/" + script.resource));
        }
    }

    private Scripts() {
    }

    public static RedisScript of(Script script) {
        return SCRIPTS.get(script);
    }

    /** Every engine script, to load at start-up. */
    public static List<RedisScript> all() {
        return List.copyOf(SCRIPTS.values());
    }

    /** The full source, as sent with {@code SCRIPT LOAD}. */
    public static String source(Script script) {
        return SCRIPTS.get(script).source();
    }

    /**
     * An {@code EVAL} of the script as a plain command's words, for tools that talk to Redis without the
     * engine (the benchmarks' sizing, the money path's checker cutting a move between its steps).
     */
    public static String[] eval(Script script, List<String> keys, List<String> args) {
        List<String> words = new java.util.ArrayList<>(List.of("EVAL", source(script), Integer.toString(keys.size())));
        words.addAll(keys);
        words.addAll(args);
        return words.toArray(String[]::new);
    }

    /** The SHA-1 digest {@code EVALSHA} names. */
    public static String digest(Script script) {
        return SCRIPTS.get(script).digest();
    }
}
