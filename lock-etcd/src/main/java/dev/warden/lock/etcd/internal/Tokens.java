package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcd.jetcd.api.AuthenticateResponse;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The token every call carries when a user is configured: etcd's {@code Auth.Authenticate} once,
 * and again when the server refuses a call for its token (expired, or older than a change of the
 * users and roles), once for every call that saw the same token. The refused call was not applied,
 * and leases are not tied to tokens, so it is sent again once and the session's lease stays.
 *
 * <p>Concurrency: {@code token} is guarded by {@code this}; an authentication is started, never
 * awaited, under it.
 */
final class Tokens {

    private static final Logger log = LoggerFactory.getLogger(Tokens.class);

    private final Credentials credentials;
    private final String endpoints;
    /** Sends an authentication request within a limit. */
    private final BiFunction<AuthenticateRequest, Duration, CompletableFuture<AuthenticateResponse>> login;

    /** The token of the last authentication, or of the one under way; null before the first. Guarded by {@code this}. */
    private CompletableFuture<String> token;

    Tokens(Credentials credentials, String endpoints,
           BiFunction<AuthenticateRequest, Duration, CompletableFuture<AuthenticateResponse>> login) {
        this.credentials = credentials;
        this.endpoints = endpoints;
        this.login = login;
    }

    /**
     * {@code send} with the current token (null without a user), authenticating first when there is
     * none; when the server refuses the token, authenticates again within {@code limit} and sends once more.
     */
    <R> CompletableFuture<R> call(Duration limit, Function<String, CompletableFuture<R>> send) {
        if (!credentials.present()) {
            return send.apply(null);
        }
        long deadline = System.nanoTime() + limit.toNanos();
        return token(limit).thenCompose(t -> send.apply(t).exceptionallyCompose(error -> stale(error)
                ? renewToken(t, remaining(deadline)).thenCompose(send)
                : CompletableFuture.failedFuture(error)));
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline - System.nanoTime()));
    }

    /** The current token, authenticating first when there is none (or the last attempt failed). */
    private synchronized CompletableFuture<String> token(Duration limit) {
        if (token == null || token.isCompletedExceptionally()) {
            token = authenticate(limit);
        }
        return token;
    }

    /** A new token instead of {@code stale}, unless another call already replaced it. */
    private synchronized CompletableFuture<String> renewToken(String stale, Duration limit) {
        if (token == null || token.isCompletedExceptionally() || (token.isDone() && stale.equals(token.getNow(null)))) {
            log.debug("etcd at {} refused the token of user {}; authenticating again", endpoints, credentials.username().orElse("-"));
            token = authenticate(limit);
        }
        return token;
    }

    /** The token to send on a stream now: the last one obtained, or none. */
    synchronized String current() {
        return token != null && token.isDone() && !token.isCompletedExceptionally() ? token.getNow(null) : null;
    }

    /**
     * etcd's {@code Auth.Authenticate} for the configured user: the token, or "" when the server has
     * authentication disabled (calls then go without one). A refusal is {@code ACCESS_DENIED}.
     */
    private CompletableFuture<String> authenticate(Duration limit) {
        String user = credentials.username().orElseThrow();
        AuthenticateRequest request = AuthenticateRequest.newBuilder().setName(user)
                .setPassword(credentials.password().orElseThrow()).build();
        CompletableFuture<AuthenticateResponse> answer = login.apply(request, limit);
        return answer.handle((r, error) -> {
            if (error == null) {
                return r.getToken();
            }
            Status status = EtcdErrors.status(error);
            String description = status == null ? "" : String.valueOf(status.getDescription());
            if (description.contains("authentication is not enabled")) {
                log.info("etcd at {} has authentication disabled; calls go without a token for user {}", endpoints, user);
                return "";
            }
            if (description.contains("authentication failed") || (status != null && status.getCode() == Status.Code.UNAUTHENTICATED)) {
                throw new LockException(LockException.Reason.ACCESS_DENIED, "etcd at " + endpoints + " refused to authenticate user '"
                        + user + "': invalid user name or password (" + Redaction.redact(description) + ")");
            }
            throw error instanceof CompletionException ce ? ce : new CompletionException(error);
        });
    }

    /** Whether the server refused a call for its token: expired, unknown, or older than a change of users and roles. */
    private static boolean stale(Throwable error) {
        Status status = EtcdErrors.status(error);
        if (status == null) {
            return false;
        }
        String description = String.valueOf(status.getDescription());
        return description.contains("invalid auth token") || description.contains("revision of auth store is old")
                || description.contains("user name is empty")
                || (status.getCode() == Status.Code.UNAUTHENTICATED && !description.contains("authentication failed"));
    }
}
