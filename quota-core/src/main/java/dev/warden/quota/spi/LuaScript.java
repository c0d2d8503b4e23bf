package dev.warden.quota.spi;

import dev.warden.redis.internal.ScriptText;

/**
 * One quota script as Redis runs it: its {@code #!lua} shebang line, then the shared prelude
 * ({@code prelude.lua}: id, amount and key checks every script makes), then its body. The digest is
 * computed here, so a call is always an {@code EVALSHA}.
 */
public final class LuaScript {

    private static final String PRELUDE = ScriptText.read(LuaScript.class, "/dev/warden/quota/prelude.lua");

    private final String name;
    private final String source;
    private final String digest;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.digest = ScriptText.digest(source);
    }

    /**
     * @param anchor   a class whose module holds the resource
     * @param resource an absolute resource path, e.g. {@code /dev/warden/quota/deduct.lua}
     * @throws IllegalStateException when it is missing or does not start with a {@code #!lua} line
     */
    public static LuaScript load(Class<?> anchor, String resource) {
        String body = ScriptText.read(anchor, resource);
        int firstLine = body.indexOf('\n');
        if (!body.startsWith("#!lua") || firstLine < 0) {
            throw new IllegalStateException(resource + " must start with a #!lua shebang line");
        }
        String name = resource.substring(resource.lastIndexOf('/') + 1);
        return new LuaScript(name, body.substring(0, firstLine + 1) + PRELUDE + body.substring(firstLine + 1));
    }

    /** The file name, for messages. */
    public String name() {
        return name;
    }

    /** The full source, as sent with {@code SCRIPT LOAD}. */
    public String source() {
        return source;
    }

    /** The SHA-1 digest {@code EVALSHA} names. */
    public String digest() {
        return digest;
    }

    @Override
    public String toString() {
        return name;
    }
}
