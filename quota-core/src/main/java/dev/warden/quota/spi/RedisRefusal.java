package dev.warden.quota.spi;

import dev.warden.quota.QuotaException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;

import java.util.List;

/**
 * Recognises Redis refusing Warden's credentials or permissions ({@code WRONGPASS}, {@code NOAUTH},
 * {@code NOPERM}) anywhere in a cause chain, where Lettuce buries it under "Unable to connect", and
 * reports it as {@link QuotaException.Reason#ACCESS_DENIED}.
 */
public final class RedisRefusal {

    private static final List<String> DENIED = List.of("WRONGPASS", "NOAUTH", "NOPERM");

    private RedisRefusal() {
    }

    /** The server's refusal (its message, which holds no secret), or null. */
    public static String of(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage();
            if (t instanceof RedisException && m != null) {
                for (String code : DENIED) {
                    if (m.startsWith(code)) {
                        return m;
                    }
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
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if ((t instanceof IllegalStateException && m.contains("HandshakeHandler not registered"))
                    || (t instanceof RedisConnectionException && m.equals("Connection closed prematurely"))) {
                return true;
            }
        }
        return false;
    }

    /** What a TLS failure in the cause chain means for the settings, or empty. */
    public static String tlsHint(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return "; the TLS handshake failed (" + t.getMessage() + "): check that warden.quota.redis.tls.trust-store"
                        + " holds the CA of the server's certificate and, where the server requires client certificates,"
                        + " that tls.key-store holds one it accepts";
            }
        }
        return "";
    }

    /** {@code ACCESS_DENIED} naming the endpoint (already redacted) and what the server said. */
    public static QuotaException accessDenied(String endpoint, String what, String refusal, Throwable cause) {
        String hint = refusal.startsWith("NOPERM")
                ? "the ACL user lacks a command, key or channel the quota engine needs (see the README's minimal ACL)"
                : "check the user name and password (warden.quota.redis.username, password, password-file or"
                        + " password-env, or the endpoint's user-info)";
        return new QuotaException(QuotaException.Reason.ACCESS_DENIED, "Redis at " + endpoint + " refused " + what
                + ": " + refusal + "; " + hint, cause);
    }
}
