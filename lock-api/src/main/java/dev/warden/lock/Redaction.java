package dev.warden.lock;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one rule that keeps secrets out of Warden's messages, log lines, {@code toString}s and CLI
 * echoes. Every endpoint or URI that Warden prints goes through {@link #redact}; every settings map
 * goes through {@link #settings}. Public because quota, the ledger CLI and the demo print endpoints
 * too and may not reach lock-api's internals.
 *
 * <p>What is hidden: the user-info of a URI ({@code redis://user:pw@h}, {@code redis://pw@h},
 * {@code redis-cluster://u:pw@h1,u:pw@h2}, {@code etcd://}, {@code zookeeper://}, {@code http(s)://}
 * and any other scheme), the same without {@code //} ({@code redis:user:pw@h}), a bare
 * {@code user:pw@host} list entry, and the value of a secret-looking query parameter
 * ({@code ?password=}, {@code &token=} ...). The user name goes with the password: it is half of a
 * credential. Over-masking is preferred to a leak: anything up to the last {@code @} of a URI's
 * authority is hidden.
 */
public final class Redaction {

    /** What replaces a secret. */
    public static final String MASK = "***";

    // User-info after "//" runs to the last '@' before whitespace, a comma or a quote (a raw '@' or '/'
    // in a password must not leave a tail behind).
    private static final Pattern AFTER_SLASHES = Pattern.compile("//[^\\s,'\"<>]*@");
    // The forms without "//": "redis:user:pw@h", or a bare "user:pw@h" entry of a host list.
    private static final Pattern NO_SLASHES = Pattern.compile(
            "(^|[\\s,'\"(\\[=])((?i:[a-z][a-z0-9+.-]*):(?!//)(?=[^\\s,'\"<>/@:]*:))?([^\\s,'\"<>/]+)@");
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)([?&;][a-z0-9_.-]*(?:password|passwd|pwd|secret|token|credentials?|auth|apikey|api-key)=)[^&\\s,'\"<>]*");
    private static final Pattern SECRET_KEY = Pattern.compile(
            "(?i).*(password|passwd|pwd|secret|token|credentials?|passphrase|apikey|api-key)");

    private Redaction() {
    }

    /** {@code text} with every credential replaced by {@value #MASK}; null stays null. */
    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = AFTER_SLASHES.matcher(text).replaceAll("//" + MASK + "@");
        // A scheme is kept only before "user:password" (two colons): "u:pw@h" is all credential.
        out = NO_SLASHES.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(3).endsWith(MASK)
                ? m.group() : m.group(1) + (m.group(2) == null ? "" : m.group(2)) + MASK + "@"));
        return SECRET_PARAMETER.matcher(out).replaceAll("$1" + MASK);
    }

    /**
     * True when a setting's value is a secret itself ({@code warden.lock.redis.password},
     * {@code ...tls.key-store-password}); false for where a secret is found
     * ({@code ...password-file}, {@code ...password-env}), which may be shown.
     */
    public static boolean isSecret(String key) {
        return key != null && SECRET_KEY.matcher(key.toLowerCase(Locale.ROOT)).matches();
    }

    /** A settings map for a message or {@code toString}: secret values masked, every other value redacted. */
    public static String settings(Map<String, ?> settings) {
        if (settings == null) {
            return "null";
        }
        Map<String, String> shown = new TreeMap<>();
        settings.forEach((k, v) -> shown.put(String.valueOf(k),
                v == null ? "null" : isSecret(String.valueOf(k)) ? MASK : redact(String.valueOf(v))));
        return shown.toString();
    }
}
