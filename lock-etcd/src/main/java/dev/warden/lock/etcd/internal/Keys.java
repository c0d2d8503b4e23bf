package dev.warden.lock.etcd.internal;

import java.nio.charset.StandardCharsets;

/**
 * The etcd keys of one lock. The queue of lock {@code name} in namespace {@code ns} is every key
 * starting with {@code enc(ns) + "/" + enc(name) + "/"}, where {@code enc} percent-encodes every
 * byte outside {@code [A-Za-z0-9._~-]} of the UTF-8 form: neither part can contain {@code '/'}, so
 * no lock's queue lies inside another's (not {@code a} inside {@code a/b}, not {@code a} inside
 * {@code ab}) and no namespace inside another. Entries end in their session's lease ID (hex), a
 * suffix without {@code '/'}.
 *
 * <p>Markers of abandoned attempts whose creation was never confirmed live under
 * {@code enc(ns) + "/!/"}, the namespace's token floor at {@code enc(ns) + "/!floor"} and its fencing
 * epoch at {@code enc(ns) + "/!epoch"}: {@code '!'} is always encoded in a name, so none is anybody's queue.
 * Shared names (semaphores, read-write locks) queue under {@code enc(ns) + "/!shared/" + enc(name) + "/"}
 * ({@link #sharedPrefix}), apart from the lock of the same name.
 */
public final class Keys {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private Keys() {
    }

    /** The prefix of every queue entry of one lock, ending in {@code '/'}. */
    public static String queuePrefix(String namespace, String name) {
        return encode(namespace) + "/" + encode(name) + "/";
    }

    /**
     * The prefix of every entry of the shared name {@code name}, ending in {@code '/'}: under the reserved
     * {@code !shared/}, so a shared name and the lock of the same name never see each other's entries,
     * and the operator's listings of locks (which skip every {@code '!'} key) never see them.
     */
    public static String sharedPrefix(String namespace, String name) {
        return encode(namespace) + "/!shared/" + encode(name) + "/";
    }

    /**
     * The key of the namespace's token floor: a grant's token is this floor (0 when absent) plus its create
     * revision. One for the namespace, not one per lock: revisions rise across every lock, so a floor raised
     * for one lock also lifts every lock that has not been taken since (its last token is older).
     */
    static String floor(String namespace) {
        return encode(namespace) + "/!floor";
    }

    /**
     * The mark of the last evicted hold of the lock whose queue prefix is {@code queuePrefix}
     * ({@code <ns>/<name>/}): {@code <ns>/!evicted/<name>}, holding the entry's create revision. Encoded
     * names hold no {@code '/'} and never start with {@code '!'}, so no lock's key is a mark's.
     */
    static String evictedMark(String queuePrefix) {
        int slash = queuePrefix.indexOf('/');
        return queuePrefix.substring(0, slash) + "/!evicted/" + queuePrefix.substring(slash + 1, queuePrefix.length() - 1);
    }

    /** The key of the highest fencing epoch the namespace's clients used. */
    static String epoch(String namespace) {
        return encode(namespace) + "/!epoch";
    }

    /** The marker that stops a late creation of the entry {@code unique}. */
    static String marker(String namespace, String unique) {
        return encode(namespace) + "/!/" + unique;
    }

    /** The inverse of {@link #encode}. */
    static String decode(String encoded) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%' && i + 2 < encoded.length()) {
                out.write(Integer.parseInt(encoded.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String encode(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '~' || c == '-') {
                out.append((char) c);
            } else {
                out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return out.toString();
    }
}
