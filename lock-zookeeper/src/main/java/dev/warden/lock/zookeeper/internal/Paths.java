package dev.warden.lock.zookeeper.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;

/**
 * Where a lock lives: {@code /<namespace>/<encoded name>} is a container node, and each contender
 * is an ephemeral sequential child {@code _c_<uuid>-lock-<10-digit sequence>} (Curator's protected
 * name). The sequence orders the queue; it is not the fencing token. A namespace whose tokens were
 * pushed up ({@code TokenFloorDriver}) has a persistent node {@code /<namespace>/%floor} holding the
 * floor in decimal: every grant's token is that floor (0 without one) plus its node's czxid. No lock's
 * path can be it: a name's {@code '%'} is always encoded as {@code %25}.
 *
 * <p>The namespace's own nodes all start with {@code '%'} ({@code %floor}, {@code %epoch},
 * {@code %evicted-<encoded name>}, {@code %shared-<encoded name>}), so none is a lock's, and listing
 * the namespace's locks skips them. A shared name (semaphore, read-write lock) queues under
 * {@code /<namespace>/%shared-<encoded name>} ({@link SharedQueue}): apart from the lock of the same
 * name, and never listed, read or evicted as one.
 */
public final class Paths {

    /** The child name Curator protects and ZooKeeper numbers. */
    static final String NODE = "lock-";
    /** The name of the namespace's token floor node. */
    static final String FLOOR = "%floor";
    /** The prefix of a shared name's parent node within the namespace. */
    static final String SHARED = "%shared-";

    private Paths() {
    }

    /** {@code /<namespace>/<encoded name>}. */
    public static String lockPath(String namespace, String name) {
        return "/" + namespace + "/" + encode(name);
    }

    /**
     * {@code /<namespace>/%shared-<encoded name>}: a shared name's queue, a container node like a
     * lock's. No lock's path, as an encoded name's {@code '%'} is always followed by two hex digits.
     */
    public static String sharedPath(String namespace, String name) {
        return "/" + namespace + "/" + SHARED + encode(name);
    }

    /** Problems with a namespace as a ZooKeeper path element; empty when it is usable. */
    static List<String> namespaceProblems(String namespace) {
        List<String> problems = new ArrayList<>();
        if (namespace.equals(".") || namespace.equals("..")) {
            problems.add("warden.lock.namespace '" + namespace + "' is not a usable ZooKeeper path element");
        }
        if (namespace.equals("zookeeper")) {
            problems.add("warden.lock.namespace 'zookeeper' is reserved by ZooKeeper itself");
        }
        return problems;
    }

    /**
     * Encodes a lock name as one path element: '/', '%' and every character ZooKeeper refuses in a
     * path (controls, surrogates and so characters outside the BMP, private use, U+FFF0..U+FFFF) become
     * %XX of their UTF-8 bytes, as do "." and ".." as whole names. Injective, since '%' is encoded.
     */
    public static String encode(String name) {
        if (name.equals(".") || name.equals("..")) {
            return name.replace(".", "%2E");
        }
        StringBuilder out = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); ) {
            int cp = name.codePointAt(i);
            int width = Character.charCount(cp);
            if (safe(cp)) {
                out.appendCodePoint(cp);
            } else {
                for (byte b : name.substring(i, i + width).getBytes(StandardCharsets.UTF_8)) {
                    out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xF, 16)))
                            .append(Character.toUpperCase(Character.forDigit(b & 0xF, 16)));
                }
            }
            i += width;
        }
        return out.toString();
    }

    /** The inverse of {@link #encode}: each run of {@code %XX} is the UTF-8 of what was encoded. */
    static String decode(String element) {
        StringBuilder out = new StringBuilder(element.length());
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < element.length(); i++) {
            char c = element.charAt(i);
            if (c == '%' && i + 2 < element.length()) {
                bytes.write(Integer.parseInt(element.substring(i + 1, i + 3), 16));
                i += 2;
                continue;
            }
            if (bytes.size() > 0) {
                out.append(bytes.toString(StandardCharsets.UTF_8));
                bytes.reset();
            }
            out.append(c);
        }
        out.append(bytes.toString(StandardCharsets.UTF_8));
        return out.toString();
    }

    private static boolean safe(int cp) {
        if (cp == '/' || cp == '%') {
            return false;
        }
        return !(cp <= 0x1F || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0xD800 && cp <= 0xF8FF)
                || (cp >= 0xFFF0 && cp <= 0xFFFF) || cp > 0xFFFF);
    }

    /** The queue order of a contender's node name, or empty for a node that is not one of ours. */
    static OptionalLong sequence(String child) {
        int at = child.lastIndexOf(NODE);
        if (at < 0) {
            return OptionalLong.empty();
        }
        String digits = child.substring(at + NODE.length());
        if (digits.length() < 10) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(digits));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** The contenders among {@code children}, first in the queue first. */
    static List<String> queue(List<String> children) {
        List<String> queue = new ArrayList<>();
        for (String child : children) {
            if (sequence(child).isPresent()) {
                queue.add(child);
            }
        }
        queue.sort(Comparator.comparingLong(c -> sequence(c).getAsLong()));
        return queue;
    }

    /** {@code /<namespace>/%epoch}: the highest fencing epoch the namespace's clients used. */
    static String epochPath(String namespace) {
        return "/" + namespace + "/%epoch";
    }

    /** {@code /<namespace>/%floor}, the namespace's token floor, from a lock's path. */
    static String floorPath(String lockPath) {
        return lockPath.substring(0, lockPath.lastIndexOf('/')) + "/" + FLOOR;
    }

    /** The last element of a path. */
    static String nodeName(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
