package dev.warden.quota.spi;

import dev.warden.quota.QuotaException;
import dev.warden.redis.internal.RedisFailures;

/**
 * Recognises Redis refusing Warden's credentials or permissions ({@code WRONGPASS}, {@code NOAUTH},
 * {@code NOPERM}) anywhere in a cause chain, where Lettuce buries it under "Unable to connect", and
 * reports it as {@link QuotaException.Reason#ACCESS_DENIED}; what the failure means is
 * {@link RedisFailures}' (shared with the Redis lock backend), the words are the quota engine's.
 */
public final class RedisRefusal {

    private RedisRefusal() {
    }

    /**
     * The server's refusal (its message, which holds no secret), or null: in the cause chain or among
     * the exceptions suppressed along it (where a Sentinel lookup keeps each sentinel's answer).
     */
    public static String of(Throwable error) {
        return RedisFailures.denial(error);
    }

    /** Whether Lettuce lost a connection handshake's outcome: see {@link RedisFailures#handshakeLost}. */
    public static boolean handshakeLost(Throwable error) {
        return RedisFailures.handshakeLost(error);
    }

    /** What a TLS failure in the cause chain means for the settings, or empty. */
    public static String tlsHint(Throwable error) {
        String failed = RedisFailures.tlsFailure(error);
        if (failed == null) {
            return "";
        }
        return "; the TLS handshake failed (" + failed + "): check that warden.quota.redis.tls.trust-store"
                + " holds the CA of the server's certificate and, where the server requires client certificates,"
                + " that tls.key-store holds one it accepts";
    }

    /** {@code ACCESS_DENIED} naming the endpoint (already redacted) and what the server said. */
    public static QuotaException accessDenied(String endpoint, String what, String refusal, Throwable cause) {
        String hint = refusal.startsWith("NOPERM")
                ? "the ACL user lacks a command, key or channel the quota engine needs (see docs/security.md#the-minimal-acl-for-a-quota-user)"
                : "check the user name and password (warden.quota.redis.username, password, password-file or"
                        + " password-env, or the endpoint's user-info)";
        return new QuotaException(QuotaException.Reason.ACCESS_DENIED, "Redis at " + endpoint + " refused " + what
                + ": " + refusal + "; " + hint, cause);
    }
}
