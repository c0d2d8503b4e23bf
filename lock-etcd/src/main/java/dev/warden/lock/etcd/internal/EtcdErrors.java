package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * What etcd's and gRPC's failures mean to a user: {@link LockException}s that name the endpoints
 * (redacted), {@code ACCESS_DENIED} for a refused login or a permission the user's role lacks,
 * {@code UNAVAILABLE} for the rest; and the questions the driver asks of a failure (its gRPC status,
 * a lease gone, a TLS failure). Immutable.
 */
final class EtcdErrors {

    private final String endpoints;
    private final Credentials credentials;

    EtcdErrors(String endpoints, Credentials credentials) {
        this.endpoints = endpoints;
        this.credentials = credentials;
    }

    /** {@code error} as the {@link LockException} a caller sees for {@code what} (a LockException as it is). */
    LockException translate(String what, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        Status status = status(cause);
        String description = status == null ? "" : String.valueOf(status.getDescription());
        String user = credentials.username().map(u -> "user '" + u + "'").orElse("no user");
        if ((status != null && status.getCode() == Status.Code.PERMISSION_DENIED) || description.contains("permission denied")) {
            return new LockException(LockException.Reason.ACCESS_DENIED, "etcd at " + endpoints + " refused " + what + " to " + user
                    + ": permission denied (" + (credentials.present() ? "the user needs"
                    : "set warden.lock.etcd.username and password, for a user with") + " a role with readwrite on the namespace's key prefix)",
                    cause);
        }
        if (description.contains("user name is empty")) {
            return new LockException(LockException.Reason.ACCESS_DENIED, "etcd at " + endpoints + " refused " + what
                    + ": the server requires authentication; set warden.lock.etcd.username and warden.lock.etcd.password", cause);
        }
        if (description.contains("authentication failed")) {
            return new LockException(LockException.Reason.ACCESS_DENIED, "etcd at " + endpoints + " refused " + what + " to " + user
                    + ": invalid user name or password", cause);
        }
        return new LockException(LockException.Reason.UNAVAILABLE,
                "etcd at " + endpoints + " failed " + what + ": " + Redaction.redact(describe(cause)), cause);
    }

    /**
     * A failure's message, with the transport's cause when gRPC only says "io exception" or
     * similar: the first TLS failure in the chain, else the deepest cause that says something.
     */
    static String describe(Throwable cause) {
        String message = String.valueOf(cause.getMessage());
        Throwable detail = null;
        Throwable t = cause.getCause();
        for (int depth = 0; t != null && depth < 10; depth++) {
            if (t.getMessage() != null) {
                detail = t;
                if (t instanceof javax.net.ssl.SSLException) {
                    break;
                }
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        if (detail != null && !message.contains(detail.getMessage())) {
            message += " (" + detail.getClass().getSimpleName() + ": " + detail.getMessage() + ")";
        }
        // gRPC adds the channel pipeline on a line of its own, which says nothing to a user.
        return message.replaceAll("\\s*\\R?\\s*Channel Pipeline: \\[[^\\]]*\\]", "").replaceAll("\\s*\\R\\s*", " ");
    }

    /** The gRPC status in {@code error}'s causes, or null. */
    static Status status(Throwable error) {
        Throwable t = error;
        for (int depth = 0; t != null && depth < 10; depth++) {
            if (t instanceof StatusRuntimeException sre) {
                return sre.getStatus();
            }
            if (t instanceof StatusException se) {
                return se.getStatus();
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return null;
    }

    /** Whether a connection failed in TLS: an untrusted certificate, a host name mismatch, a server not speaking TLS. */
    static boolean tlsFailure(Throwable error) {
        Throwable t = error;
        for (int depth = 0; t != null && depth < 10; depth++) {
            if (t instanceof javax.net.ssl.SSLException) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Whether the server said the lease does not exist (expired or revoked). */
    static boolean leaseNotFound(Throwable error) {
        Throwable t = unwrap(error);
        while (t != null) {
            Status status = t instanceof StatusRuntimeException sre ? sre.getStatus()
                    : t instanceof StatusException se ? se.getStatus() : null;
            if (status != null && status.getCode() == Status.Code.NOT_FOUND
                    && String.valueOf(status.getDescription()).contains("lease not found")) {
                return true;
            }
            if (t instanceof LeaseGone) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    /** The lease of a session is gone on the server, or the session was lost locally. */
    static final class LeaseGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LeaseGone(String message) {
            super(message, null, false, false);
        }
    }
}
