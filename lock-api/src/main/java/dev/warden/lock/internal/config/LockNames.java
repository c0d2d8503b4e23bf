package dev.warden.lock.internal.config;

import java.nio.charset.StandardCharsets;

/** The rules every lock name follows, whatever the backend. */
public final class LockNames {

    public static final int MAX_UTF8_BYTES = 256;

    private LockNames() {
    }

    /** @throws IllegalArgumentException naming the rule the name breaks */
    public static String validate(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name must not be empty");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(
                        "lock name must not contain control characters (U+%04X at index %d)".formatted((int) c, i));
            }
            if (Character.isHighSurrogate(c) && (i + 1 >= name.length() || !Character.isLowSurrogate(name.charAt(i + 1)))
                    || Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(name.charAt(i - 1)))) {
                throw new IllegalArgumentException("lock name is not well-formed UTF-16 (lone surrogate at index " + i + ")");
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_UTF8_BYTES) {
            throw new IllegalArgumentException(
                    "lock name must be at most " + MAX_UTF8_BYTES + " bytes of UTF-8, was " + bytes);
        }
        return name;
    }
}
