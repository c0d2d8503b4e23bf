package dev.warden.quota.redis;

import dev.warden.quota.QuotaException;
import dev.warden.redis.internal.RedisFailures;

/**
 * The quota engine's words for what {@link RedisFailures} (shared with the Redis lock backend) finds:
 * a refusal of credentials or permissions ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}) becomes
 * {@link QuotaException.Reason#ACCESS_DENIED}, a failed TLS handshake a hint about the settings.
 */
public final class RedisRefusal {

    private RedisRefusal() {
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
