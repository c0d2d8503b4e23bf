package dev.warden.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A Lua script's text as shipped in a jar, and the SHA-1 digest {@code EVALSHA} names it by. */
public final class ScriptText {

    private ScriptText() {
    }

    /**
     * The resource's text.
     *
     * @param anchor   a class whose module holds the resource
     * @param resource an absolute resource path
     * @throws IllegalStateException when it is missing
     */
    public static String read(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + resource, e);
        }
    }

    /** The lower-case hex SHA-1 of the source, as Redis computes it for {@code SCRIPT LOAD}. */
    public static String digest(String source) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}
