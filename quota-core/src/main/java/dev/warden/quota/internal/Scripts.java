package dev.warden.quota.internal;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The quota scripts: one per operation, each its shebang line, then the shared prelude, then its
 * body. Digests are computed here, so a call is always an {@code EVALSHA}; the scripts are loaded
 * when the service starts, and a {@code NOSCRIPT} reply (after {@code SCRIPT FLUSH}, a restart or
 * a failover) loads the script again and retries once.
 */
public final class Scripts {

    private static final String RESOURCES = "/dev/warden/quota/";

    /** The operations. */
    public enum Script {
        OPEN("open.lua"),
        CREDIT("credit.lua"),
        DEDUCT("deduct.lua"),
        BALANCE("balance.lua"),
        /** Reconciliation's read of one partition: marker, last journal entry id, balances (no writes). */
        LEDGER_SNAPSHOT("ledger_snapshot.lua"),
        /** Repair and bootstrap: compare-and-set of a balance from the ledger, marker written if missing. */
        LEDGER_RESTORE("ledger_restore.lua");

        final String resource;

        Script(String resource) {
            this.resource = resource;
        }
    }

    private static final Map<Script, String> SOURCES = new EnumMap<>(Script.class);
    private static final Map<Script, String> DIGESTS = new EnumMap<>(Script.class);

    static {
        String prelude = read("prelude.lua");
        for (Script script : Script.values()) {
            String body = read(script.resource);
            int firstLine = body.indexOf('\n');
            if (!body.startsWith("#!lua") || firstLine < 0) {
                throw new IllegalStateException(script.resource + " must start with a #!lua shebang line");
            }
            String source = body.substring(0, firstLine + 1) + prelude + body.substring(firstLine + 1);
            SOURCES.put(script, source);
            DIGESTS.put(script, sha1(source));
        }
    }

    private final RedisAsyncCommands<String, String> loader;

    /** @param loader the connection that loads scripts and runs retries (it flushes on its own) */
    public Scripts(RedisAsyncCommands<String, String> loader) {
        this.loader = loader;
    }

    /** The full source, as sent with {@code SCRIPT LOAD}. */
    public static String source(Script script) {
        return SOURCES.get(script);
    }

    /** The SHA-1 digest {@code EVALSHA} names. */
    public static String digest(Script script) {
        return DIGESTS.get(script);
    }

    /** Loads every script. */
    public CompletableFuture<Void> loadAll() {
        return CompletableFuture.allOf(SOURCES.keySet().stream().map(this::load).toArray(CompletableFuture[]::new));
    }

    /**
     * Runs a script by digest on {@code commands}; on {@code NOSCRIPT} loads it and retries once on
     * the loader's connection.
     */
    public CompletableFuture<List<Object>> run(RedisAsyncCommands<String, String> commands, Script script, String[] keys,
                                        String... args) {
        return evalsha(commands, script, keys, args).exceptionallyCompose(error ->
                Errors.unwrap(error) instanceof RedisNoScriptException
                        ? load(script).thenCompose(digest -> evalsha(loader, script, keys, args))
                        : CompletableFuture.failedFuture(error));
    }

    private static CompletableFuture<List<Object>> evalsha(RedisAsyncCommands<String, String> commands, Script script,
                                                           String[] keys, String... args) {
        try {
            return commands.<List<Object>>evalsha(DIGESTS.get(script), ScriptOutputType.MULTI, keys, args)
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<String> load(Script script) {
        try {
            return loader.scriptLoad(SOURCES.get(script)).toCompletableFuture().thenApply(digest -> {
                if (!DIGESTS.get(script).equals(digest)) {
                    throw new IllegalStateException("Redis computed digest " + digest + " for " + script.resource
                            + ", expected " + DIGESTS.get(script));
                }
                return digest;
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static String read(String resource) {
        try (InputStream in = Scripts.class.getResourceAsStream(RESOURCES + resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + RESOURCES + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + resource, e);
        }
    }

    private static String sha1(String source) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}
