package dev.warden.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * What a failure from Lettuce means, wherever Lettuce buried it: a refusal of credentials or
 * permissions ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}), a handshake whose outcome was
 * lost, a TLS handshake that failed. Each caller turns the answer into its own exception.
 */
public final class RedisFailures {

    /**
     * Server errors a script gets before any of its writes, so sending it again cannot apply it twice:
     * the script was missing, its slot is migrating, the cluster or the node is not ready, the node is
     * a replica now (a script's first write fails there, and every Warden script checks before it writes).
     */
    private static final Set<String> REFUSED_BEFORE_RUNNING = Set.of("NOSCRIPT", "TRYAGAIN", "CLUSTERDOWN", "LOADING",
            "MASTERDOWN", "READONLY", "BUSY");
    /** How Lettuce words a command it rejected unsent, its connection being (re)made. */
    private static final String NOT_SENT = "Currently not connected";
    /** Server errors that refuse credentials or permissions: never retried. */
    private static final List<String> DENIED = List.of("WRONGPASS", "NOAUTH", "NOPERM");
    private static final String SCRIPT_DENIED = "ERR The user executing the script can't run";
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
                // Redis 7.0 reports a command a script may not run as a plain error, not NOPERM.
                if (m.startsWith(SCRIPT_DENIED)) {
                    return m;
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
     * close is seen first, reported as "Connection closed prematurely"; or a Sentinel lookup whose
     * question never left ({@link #sentinelNotAsked}). Connecting once more reports the refusal (a
     * server that really closes the connection closes it again).
     */
    public static boolean handshakeLost(Throwable error) {
        for (Throwable t = error; t != null; t = next(t)) {
            String m = String.valueOf(t.getMessage());
            if ((t instanceof IllegalStateException && m.contains("HandshakeHandler not registered"))
                    || (t instanceof RedisConnectionException && m.equals("Connection closed prematurely"))
                    || sentinelNotAsked(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A Sentinel lookup that never asked: every sentinel's connection dropped the question unsent
     * ("Currently not connected", seen under load right after the connection was made), so nothing was
     * refused and asking again is all there is to do.
     */
    private static boolean sentinelNotAsked(Throwable t) {
        if (!(t instanceof RedisConnectionException) || !String.valueOf(t.getMessage()).startsWith("Cannot obtain master")
                || t.getSuppressed().length == 0) {
            return false;
        }
        for (Throwable s : t.getSuppressed()) {
            Throwable cause = unwrap(s);
            if (!(cause instanceof RedisException) || !String.valueOf(cause.getMessage()).startsWith(NOT_SENT)) {
                return false;
            }
        }
        return true;
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

    /** The failure under the futures' wrappers ({@link CompletionException}, {@link ExecutionException}). */
    public static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The server's error code ({@code TRYAGAIN}, {@code OOM}, ...): the first word of its message. */
    public static String code(RedisCommandExecutionException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        int space = message.indexOf(' ');
        return space < 0 ? message : message.substring(0, space);
    }

    /**
     * Whether the server refused a script before it ran (see {@link #REFUSED_BEFORE_RUNNING}), or, when
     * {@code unsentCounts}, Lettuce rejected it unsent while the connection was being made (a Cluster
     * client connects to a node at the first command for its slots): either way it is safe to send again.
     */
    public static boolean refusedBeforeRunning(Throwable error, boolean unsentCounts) {
        Throwable cause = unwrap(error);
        if (cause instanceof RedisCommandExecutionException e) {
            return REFUSED_BEFORE_RUNNING.contains(code(e));
        }
        return unsentCounts && cause instanceof RedisException && cause.getMessage() != null
                && cause.getMessage().startsWith(NOT_SENT);
    }

    private static Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }
}
