package dev.warden.quota.ledger.internal.store;

import java.util.LinkedHashMap;
import java.util.Map;

/** A quarantined entry's fields as the database stores them: one {@code name=value} per line. */
public final class FieldsCodec {

    private FieldsCodec() {
    }

    /** Fields as stored: one {@code name=value} per line, values with {@code \}, newline escaped. */
    public static String encode(Map<String, String> fields) {
        StringBuilder b = new StringBuilder();
        fields.forEach((k, v) -> b.append(escape(k)).append('=').append(escape(v)).append('\n'));
        return b.toString();
    }

    public static Map<String, String> decode(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (text == null) {
            return fields;
        }
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(unescape(line.substring(0, eq)), unescape(line.substring(eq + 1)));
            }
        }
        return fields;
    }

    private static String escape(String s) {
        return s == null ? "" : s.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\e");
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 'n' ? '\n' : n == 'e' ? '=' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
