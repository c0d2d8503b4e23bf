package dev.warden.benchmarks.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads one line of {@code results.jsonl}: a flat JSON object whose values are strings, numbers,
 * booleans or null. Numbers come back as {@link Double}. {@code NaN} is accepted as a number because
 * results written before it was spelt {@code null} carry it (no JSON library on the class path reads it
 * without extra settings, and the format is this module's own).
 */
public final class JsonLine {

    private final String text;
    private int at;

    private JsonLine(String text) {
        this.text = text;
    }

    /**
     * The fields of the object on {@code line}, in order.
     *
     * @throws IllegalArgumentException when the line is not a flat JSON object
     */
    public static Map<String, Object> parse(String line) {
        return new JsonLine(line).object();
    }

    private Map<String, Object> object() {
        Map<String, Object> fields = new LinkedHashMap<>();
        expect('{');
        if (peek() == '}') {
            at++;
            return end(fields);
        }
        while (true) {
            String key = string();
            expect(':');
            fields.put(key, value());
            char c = next();
            if (c == '}') {
                return end(fields);
            }
            if (c != ',') {
                throw error("',' or '}'");
            }
        }
    }

    private Map<String, Object> end(Map<String, Object> fields) {
        if (peek() != 0) {
            throw error("the end of the line");
        }
        return fields;
    }

    private Object value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        int start = at;
        while (at < text.length() && ",}] \t".indexOf(text.charAt(at)) < 0) {
            at++;
        }
        String token = text.substring(start, at);
        return switch (token) {
            case "null" -> null;
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            case "NaN" -> Double.NaN;
            default -> {
                try {
                    yield Double.parseDouble(token);
                } catch (NumberFormatException e) {
                    at = start;
                    throw error("a string, number, true, false or null");
                }
            }
        };
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw error("a closing '\"'");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (at >= text.length()) {
                throw error("an escaped character");
            }
            char e = text.charAt(at++);
            switch (e) {
                case '"', '\\', '/' -> b.append(e);
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw error("four hex digits");
                    }
                    b.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> throw error("an escape sequence");
            }
        }
    }

    private void expect(char c) {
        if (next() != c) {
            at--;
            throw error("'" + c + "'");
        }
    }

    private char next() {
        char c = peek();
        at++;
        return c;
    }

    /** The next character that is not white space, or 0 at the end; leaves {@code at} on it. */
    private char peek() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
        return at < text.length() ? text.charAt(at) : 0;
    }

    private IllegalArgumentException error(String expected) {
        return new IllegalArgumentException("expected " + expected + " at column " + (at + 1) + " of: " + text);
    }
}
