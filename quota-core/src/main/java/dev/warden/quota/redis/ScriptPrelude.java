package dev.warden.quota.redis;

import dev.warden.redis.internal.RedisScript;
import dev.warden.redis.internal.ScriptText;
import io.lettuce.core.ScriptOutputType;

/**
 * The quota engine's and the ledger's scripts as Redis runs them: each file's {@code #!lua} shebang line,
 * then the shared prelude ({@code prelude.lua}: the id, amount and key checks every script makes), then
 * its body; every reply a list.
 */
public final class ScriptPrelude {

    private static final String PRELUDE = ScriptText.read(ScriptPrelude.class, "/dev/warden/quota/prelude.lua");

    private ScriptPrelude() {
    }

    /**
     * @param anchor   a class whose module holds the resource
     * @param resource an absolute resource path, e.g. {@code /dev/warden/quota/deduct.lua}
     * @throws IllegalStateException when it is missing or does not start with a {@code #!lua} line
     */
    public static RedisScript load(Class<?> anchor, String resource) {
        String body = ScriptText.read(anchor, resource);
        int firstLine = body.indexOf('\n');
        if (!body.startsWith("#!lua") || firstLine < 0) {
            throw new IllegalStateException(resource + " must start with a #!lua shebang line");
        }
        return RedisScript.of(resource.substring(resource.lastIndexOf('/') + 1),
                body.substring(0, firstLine + 1) + PRELUDE + body.substring(firstLine + 1), ScriptOutputType.MULTI);
    }
}
