package dev.warden.redis.internal;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;

import java.util.List;

/**
 * What a failure from Lettuce means, wherever Lettuce buried it: a refusal of credentials or
 * permissions ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}), a handshake whose outcome was
 * lost, a TLS handshake that failed. Each caller turns the answer into its own exception.
 */
public final class RedisFailures {

    /** Server errors that refuse credentials or permissions: never retried. */
    private static final List<String> DENIED = List.of("WRONGPASS", "NOAUTH", "NOPERM");
    /** How deep into causes and suppressed exceptions to look; Lettuce's chains are short. */
    private static final int MAX_DEPTH = 8;

    private RedisFailures() {
    }

    /**
     * The server's refusal of credentials or permissions (its message, which holds no secret) anywhere
     * in the cause chain or among the exceptions suppressed along it (a Sentinel lookup that failed on
     * every sentinel carries each sentinel's answer there), or null.
     */
    public static String denial(Throwable error) {
        return denial(error, 0);
    }

    private static String denial(Throwable error, int depth) {
        for (Throwable t = error; t != null && depth < MAX_DEPTH; t = next(t), depth++) {
            String m = t.getMessage();
            if (t instanceof RedisException && m != null) {
                for (String code : DENIED) {
                    if (m.startsWith(code)) {
                        return m;
                    }
                }
            }
            for (Throwable suppressed : t.getSuppressed()) {
                String found = denial(suppressed, depth + 1);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /**
     * Whether Lettuce lost a connection handshake's outcome: under load the handshake can fail (a
     * refused password, say) and take its handler out of the channel before Lettuce's connect step
     * looks for it, which then reports only "RedisHandshakeHandler not registered"; or the channel's
     * close is seen first, reported as "Connection closed prematurely". Connecting once more reports
     * the refusal (a server that really closes the connection closes it again).
     */
    public static boolean handshakeLost(Throwable error) {
        for (Throwable t = error; t != null; t = next(t)) {
            String m = String.valueOf(t.getMessage());
            if ((t instanceof IllegalStateException && m.contains("HandshakeHandler not registered"))
                    || (t instanceof RedisConnectionException && m.equals("Connection closed prematurely"))) {
                return true;
            }
        }
        return false;
    }

    /** The message of a failed TLS handshake in the cause chain, or null. */
    public static String tlsFailure(Throwable error) {
        for (Throwable t = error; t != null; t = next(t)) {
            if (t instanceof javax.net.ssl.SSLException) {
                return String.valueOf(t.getMessage());
            }
        }
        return null;
    }

    private static Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }
}
