package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.spi.LockConfig;
import io.etcd.jetcd.api.LeaseGrantRequest;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseRevokeRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The etcd driver's lifecycle: its threads, its gRPC channel ({@link Calls}) and its session, one
 * etcd lease at a time ({@link Session}): granted when none is alive (one grant however many
 * attempts ask), dropped and revoked when lost, revoked when the driver closes. {@link EtcdDriver}
 * opens it, asks it for the session and closes it.
 *
 * <p>Concurrency: {@code current} and {@code granting} are guarded by {@code this}; {@code closed} and
 * the session listener are volatile ({@code closed} is written under {@code this}, so no lease is
 * installed after close takes the current one); the executors and the channel are thread-safe.
 */
final class Lifecycle {

    // The driver's category, as before this class was split from it: log settings naming it still apply.
    private static final Logger log = LoggerFactory.getLogger(EtcdDriver.class);
    private static final AtomicInteger DRIVERS = new AtomicInteger();

    private final LockConfig config;
    private final ScheduledThreadPoolExecutor timers;
    private final ThreadPoolExecutor completions;
    private final Calls calls;

    private Session current;
    private CompletableFuture<Session> granting;
    private volatile Consumer<Throwable> sessionListener = cause -> { };
    private volatile boolean closed;

    Lifecycle(LockConfig config) {
        this.config = config;
        // First, so that a store that cannot be read fails before any thread starts.
        Credentials credentials = Credentials.of(config.options(), System::getenv);
        java.util.Optional<io.netty.handler.ssl.SslContext> tls = Endpoints.tls(config.endpoints())
                ? java.util.Optional.of(Tls.of(config.options(), System::getenv).sslContext()) : java.util.Optional.empty();
        int n = DRIVERS.incrementAndGet();
        timers = new ScheduledThreadPoolExecutor(1, daemon("warden-etcd-timer-" + n));
        timers.setRemoveOnCancelPolicy(true);
        completions = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(),
                daemon("warden-etcd-" + n));
        List<URI> uris = new ArrayList<>(Endpoints.parse(config.endpoints()));
        // Spread clients over the members; gRPC's pick_first then fails over in this order.
        Collections.shuffle(uris);
        String shown = Redaction.redact(config.endpoints().stream().map(String::trim).collect(Collectors.joining(",")));
        // Every member an address, tried in this order (see Members).
        List<InetSocketAddress> members = uris.stream()
                .map(u -> InetSocketAddress.createUnresolved(u.getHost(), u.getPort())).distinct().toList();
        calls = new Calls(timers, completions, config.requestTimeout(), shown, members, config.connectTimeout(),
                daemon("warden-etcd-io-" + n), credentials, tls);
    }

    Calls calls() {
        return calls;
    }

    boolean isClosed() {
        return closed;
    }

    void onSessionLost(Consumer<Throwable> listener) {
        sessionListener = listener;
    }

    /** The first lease, asked for at open within {@code limit}, and installed as the session once granted. */
    CompletableFuture<Session> first(Duration limit) {
        CompletableFuture<Session> opened;
        synchronized (this) {
            opened = grantLease(limit);
            granting = opened;
        }
        opened.whenComplete((s, error) -> installGranted(opened, s));
        return opened;
    }

    /** The live session, or a new one (a new etcd lease) when there is none or it was lost. */
    synchronized CompletableFuture<Session> session() {
        if (closed) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CLOSED, "the etcd driver is closed"));
        }
        if (current != null && current.isAlive()) {
            return CompletableFuture.completedFuture(current);
        }
        CompletableFuture<Session> g = granting;
        if (g == null) {
            CompletableFuture<Session> grant = grantLease(config.requestTimeout());
            granting = grant;
            // A grant already complete installs itself here, on this thread, and clears `granting`:
            // the caller still gets the grant, never null.
            grant.whenComplete((s, error) -> installGranted(grant, s));
            g = grant;
        }
        return g;
    }

    private void installGranted(CompletableFuture<Session> g, Session s) {
        synchronized (this) {
            if (granting == g) {
                granting = null;
            }
            if (s != null) {
                if (closed) {
                    s.close();
                    revoke(s);
                } else {
                    current = s;
                }
            }
        }
    }

    private CompletableFuture<Session> grantLease(Duration limit) {
        long ttlSeconds = config.ttl().toSeconds();
        long sentAt = System.nanoTime();
        return calls.unary("a lease grant", limit, LeaseGrpc.getLeaseGrantMethod(),
                LeaseGrantRequest.newBuilder().setTTL(ttlSeconds).build()).thenApply(response -> {
            if (response.getTTL() != ttlSeconds) {
                revoke(response.getID());
                throw new LockException(LockException.Reason.CONFIGURATION, "etcd granted a lease of " + response.getTTL()
                        + " s for the configured warden.lock.ttl of " + ttlSeconds + " s: the cluster's minimum lease TTL"
                        + " (about 1.5 election timeouts) is higher; configure warden.lock.ttl=" + response.getTTL()
                        + "s or more, or a lock would outlive its configured TTL");
            }
            Session s = new Session(response.getID(), config.ttl(), sentAt, calls, this::sessionLost);
            s.start();
            log.debug("etcd lease {} granted, TTL {} s", Long.toHexString(response.getID()), ttlSeconds);
            return s;
        });
    }

    private void sessionLost(Session s, Throwable cause) {
        synchronized (this) {
            if (current == s) {
                current = null;
            }
        }
        // We stopped keeping it alive; revoking frees what it carried at once rather than at its TTL.
        revoke(s);
        sessionListener.accept(cause);
    }

    private void revoke(Session s) {
        revoke(s.leaseId()).whenComplete((r, error) -> {
            if (error != null) {
                log.debug("could not revoke {}; it expires on the server within its TTL", s, error);
            }
        });
    }

    private CompletableFuture<?> revoke(long leaseId) {
        return calls.unary("a lease revoke", LeaseGrpc.getLeaseRevokeMethod(),
                LeaseRevokeRequest.newBuilder().setID(leaseId).build());
    }

    /**
     * Closes once: no session is granted or installed from now on. {@code first} runs next, while the
     * channel is still up; then the live session's lease is revoked, and the channel and the threads stop.
     */
    void close(Runnable first) {
        Session s;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            s = current;
            current = null;
        }
        first.run();
        try {
            if (s != null) {
                s.close();
                try {
                    CompletableFuture<?> revoked = revoke(s.leaseId());
                    // Closed from a callback on the I/O thread, which the answer needs: no waiting (the
                    // lease then expires within its TTL).
                    if (!calls.onIoThread()) {
                        revoked.get(config.requestTimeout().toMillis() + 100, TimeUnit.MILLISECONDS);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException e) {
                    log.debug("could not revoke {} on close; it expires within its TTL", s, e);
                }
            }
        } finally {
            try {
                calls.close(config.requestTimeout());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                timers.shutdownNow();
                completions.shutdown();
                try {
                    if (!completions.awaitTermination(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                        completions.shutdownNow();
                    }
                    timers.awaitTermination(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
