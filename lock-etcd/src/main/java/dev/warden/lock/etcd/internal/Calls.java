package dev.warden.lock.etcd.internal;

import com.google.common.util.concurrent.MoreExecutors;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseKeepAliveRequest;
import io.etcd.jetcd.api.LeaseKeepAliveResponse;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The driver's gRPC connection to etcd and every call it makes, on etcd's protocol messages (from
 * jetcd) over one gRPC channel that the driver owns, with one I/O thread of its own.
 *
 * <ul>
 *   <li>A call starts on the calling thread; its answer is handled on the driver's I/O thread, and
 *       what waits on it (lock-api's acquire loop and lease keeper) continues there, without a
 *       hand-off: lock-api hands user code (async continuations, lease-lost listeners) to its own
 *       threads, and observers must be quick. jetcd's client took about ten thread hand-offs per
 *       call (an executor to start it, gRPC's default executor to answer it).</li>
 *   <li>Every unary call, and every keep-alive, carries a gRPC deadline of the request timeout,
 *       which also bounds waiting for a ready connection; watches carry none.</li>
 *   <li>Keep-alives and watches ask for a member that has a leader ({@code hasleader}), so a member
 *       cut off from the cluster fails them instead of leaving them silent.</li>
 *   <li>Errors become {@link LockException}s through {@link EtcdErrors}.</li>
 *   <li>With {@link Credentials}, every call carries the token {@link Tokens} keeps (keep-alives
 *       and watches included), and a call refused for its token is sent once more with a new one.</li>
 *   <li>A watch carries the token it starts with: etcd checks it when the watch is created, and
 *       cancels a watch it refuses; the attempt then polls again, which authenticates again.</li>
 *   <li>With {@link Tls} ({@code etcds://}), the channel speaks TLS and verifies the member's
 *       certificate and its host name or IP address (gRPC's TLS negotiation sets HTTPS endpoint
 *       identification on the engine).</li>
 *   <li>The channel fails over between members in the order given ({@code pick_first}); HTTP/2
 *       pings notice a frozen member, and {@link StalledMember} moves the channel off a member that
 *       let every call run into its deadline for two request timeouts.</li>
 * </ul>
 *
 * <p>Concurrency: every field is final and thread-safe (the channel, the executors, the tokens).
 */
final class Calls {

    /** Runs gRPC callbacks on the I/O thread that received the answer: Guava's, which gRPC runs without a queue. */
    private static final Executor DIRECT = MoreExecutors.directExecutor();
    /** Every bounded call's options but its deadline, built once rather than copied twice per call. */
    private static final CallOptions WAIT_FOR_READY_DIRECT = CallOptions.DEFAULT.withWaitForReady().withExecutor(DIRECT);
    private static final Metadata.Key<String> HAS_LEADER = Metadata.Key.of("hasleader", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);
    private static final Logger log = LoggerFactory.getLogger(Calls.class);

    private final ScheduledExecutorService timers;
    private final Executor completions;
    private final Duration timeout;
    private final String endpoints;
    private final EventLoopGroup io;
    private final ManagedChannel channel;
    private final Channel withLeader;
    private final StalledMember stalled;
    private final Tokens tokens;
    private final EtcdErrors errors;
    private final boolean tls;

    Calls(ScheduledExecutorService timers, Executor completions, Duration timeout, String endpoints,
          List<InetSocketAddress> members, Duration connectTimeout, ThreadFactory ioThreads,
          Credentials credentials, Optional<SslContext> tls) {
        this.timers = timers;
        this.completions = completions;
        this.timeout = timeout;
        this.endpoints = endpoints;
        this.errors = new EtcdErrors(endpoints, credentials);
        this.tokens = new Tokens(credentials, endpoints, (request, limit) -> send("authenticating user '"
                + request.getName() + "'", limit, AuthGrpc.getAuthenticateMethod(), request, null));
        this.tls = tls.isPresent();
        this.io = new MultiThreadIoEventLoopGroup(1, ioThreads, NioIoHandler.newFactory());
        Members.Order order = new Members.Order(members);
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(Members.target())
                .setNameResolverArg(Members.MEMBERS, order)
                .eventLoopGroup(io)
                .channelType(NioSocketChannel.class)
                .executor(completions)
                .offloadExecutor(completions);
        if (tls.isPresent()) {
            builder.sslContext(tls.get()).useTransportSecurity();
        } else {
            builder.usePlaintext();
        }
        this.channel = builder
                .defaultLoadBalancingPolicy("pick_first")
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                // A frozen member keeps its TCP connection open: HTTP/2 pings (gRPC's minimum interval is
                // 10 s; etcd accepts pings every 5 s while calls are open) notice it and fail over.
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveTimeout(3, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(false)
                // A fixed window: no flow-control pings (window auto-tuning) on every answer.
                .flowControlWindow(NettyChannelBuilder.DEFAULT_FLOW_CONTROL_WINDOW)
                // gRPC's transparent retry stays on: it resends a call a member refused unprocessed (a stream refused
                // or sent after GOAWAY in a rolling restart), which a release or a try-lock without wait would
                // otherwise see as UNAVAILABLE. It costs a retriable stream around every call; safety first.
                .build();
        Metadata leader = new Metadata();
        leader.put(HAS_LEADER, "true");
        this.withLeader = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(leader));
        // Two whole request timeouts without an answer, so one slow answer is not taken for a frozen member.
        this.stalled = new StalledMember(order, channel, timeout.multipliedBy(2), this::execute);
    }

    private static CallOptions bounded(Duration limit) {
        return WAIT_FOR_READY_DIRECT.withDeadlineAfter(limit.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** One unary call, bounded by the request timeout. */
    <Q, R> CompletableFuture<R> unary(String what, MethodDescriptor<Q, R> method, Q request) {
        return unary(what, timeout, method, request);
    }

    /**
     * One unary call bounded by {@code limit} through its gRPC deadline, which also covers waiting
     * for a ready connection (and an authentication first, when there is no token yet); completes
     * on the I/O thread. A call refused for its token authenticates again and is sent once more
     * within the same limit.
     */
    <Q, R> CompletableFuture<R> unary(String what, Duration limit, MethodDescriptor<Q, R> method, Q request) {
        long deadline = System.nanoTime() + limit.toNanos();
        return tokens.call(limit, t -> send(what, remaining(deadline), method, request, t));
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline - System.nanoTime()));
    }

    private static Metadata headers(String token) {
        Metadata headers = new Metadata();
        if (token != null && !token.isEmpty()) {
            headers.put(TOKEN, token);
        }
        return headers;
    }

    private <Q, R> CompletableFuture<R> send(String what, Duration limit, MethodDescriptor<Q, R> method, Q request, String token) {
        return send(what, channel, bounded(limit), method, request, token);
    }

    private <Q, R> CompletableFuture<R> send(String what, Channel on, CallOptions options, MethodDescriptor<Q, R> method,
                                             Q request, String token) {
        CompletableFuture<R> result = new CompletableFuture<>();
        try {
            ClientCall<Q, R> call = on.newCall(method, options);
            call.start(new ClientCall.Listener<R>() {
                private R value;

                @Override
                public void onMessage(R message) {
                    value = message;
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    stalled.ended(status, call);
                    if (status.isOk() && value != null) {
                        result.complete(value);
                    } else {
                        result.completeExceptionally(errors.translate(what, status.isOk()
                                ? Status.INTERNAL.withDescription("no answer").asRuntimeException()
                                : status.asRuntimeException(trailers)));
                    }
                }
            }, headers(token));
            call.request(2);
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException e) {
            result.completeExceptionally(errors.translate(what, e));
        }
        return result;
    }

    /**
     * One keep-alive of {@code leaseId} on a stream of its own, bounded by the request timeout:
     * the server's answer, whose TTL is 0 when the lease is gone.
     */
    CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(String what, long leaseId) {
        return tokens.call(timeout, t -> keepAliveOnce(what, leaseId, t));
    }

    private CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(String what, long leaseId, String token) {
        CompletableFuture<LeaseKeepAliveResponse> result = new CompletableFuture<>();
        try {
            ClientCall<LeaseKeepAliveRequest, LeaseKeepAliveResponse> call =
                    withLeader.newCall(LeaseGrpc.getLeaseKeepAliveMethod(), bounded(timeout));
            call.start(new ClientCall.Listener<LeaseKeepAliveResponse>() {
                @Override
                public void onMessage(LeaseKeepAliveResponse message) {
                    result.complete(message);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    stalled.ended(status, call);
                    if (!result.isDone()) {
                        result.completeExceptionally(errors.translate(what, status.isOk()
                                ? Status.INTERNAL.withDescription("stream ended without an answer").asRuntimeException()
                                : status.asRuntimeException(trailers)));
                    }
                }
            }, headers(token));
            call.request(1);
            call.sendMessage(LeaseKeepAliveRequest.newBuilder().setID(leaseId).build());
            // The server answers a request before it reads the end of the stream.
            call.halfClose();
        } catch (RuntimeException e) {
            result.completeExceptionally(errors.translate(what, e));
        }
        return result;
    }

    /** A watch; {@link #cancel} ends it. */
    interface Watching {
        void cancel();
    }

    /**
     * Watches one key from {@code startRevision} on a stream of its own: {@code onResponse} gets
     * every answer (created, events, cancelled) on the I/O thread, {@code onEnd} the end of the
     * stream (null when the server ended it normally), unless it was cancelled here.
     */
    Watching watch(String what, WatchRequest create, Consumer<WatchResponse> onResponse, Consumer<Throwable> onEnd) {
        ClientCall<WatchRequest, WatchResponse> call = withLeader.newCall(WatchGrpc.getWatchMethod(),
                CallOptions.DEFAULT.withWaitForReady().withExecutor(DIRECT));
        call.start(new ClientCall.Listener<WatchResponse>() {
            @Override
            public void onMessage(WatchResponse message) {
                call.request(1);
                onResponse.accept(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                if (status.getCode() == Status.Code.CANCELLED && status.getCause() instanceof WatchCancelled) {
                    return;
                }
                onEnd.accept(status.isOk() ? null : errors.translate(what, status.asRuntimeException(trailers)));
            }
        }, headers(tokens.current()));
        call.request(1);
        call.sendMessage(create);
        return () -> call.cancel("watch no longer needed", new WatchCancelled());
    }

    /** Marks a watch this driver cancelled itself. */
    private static final class WatchCancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        WatchCancelled() {
            super("cancelled by the driver", null, false, false);
        }
    }

    /** Schedules on the driver's timer; null once it is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return timers.schedule(() -> execute(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs on the driver's threads, or here once they are shut down. */
    void execute(Runnable task) {
        try {
            completions.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** Whether the calling thread is the driver's I/O thread. */
    boolean onIoThread() {
        return io.next().inEventLoop();
    }

    /** Closes the channel and stops the I/O thread, waiting up to {@code wait} for each. */
    void close(Duration wait) throws InterruptedException {
        channel.shutdownNow();
        boolean here = onIoThread();
        if (!here) {
            channel.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
        }
        io.shutdownGracefully(0, wait.toMillis(), TimeUnit.MILLISECONDS);
        if (!here) {
            io.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Waits until the channel is connected to a member, at most {@code limit}: null when connected,
     * else the last connection failure seen (a {@link java.util.concurrent.TimeoutException} when
     * none was). Fails at once with {@code UNAVAILABLE} when a TLS handshake fails, which waiting
     * does not cure.
     */
    Throwable awaitConnected(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        Throwable last = null;
        while (true) {
            ConnectivityState state = channel.getState(true);
            if (state == ConnectivityState.READY) {
                return null;
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE) {
                Throwable failure = probe();
                if (failure != null) {
                    last = failure;
                    if (EtcdErrors.tlsFailure(failure)) {
                        throw new LockException(LockException.Reason.UNAVAILABLE, "TLS handshake with etcd at " + endpoints
                                + " failed: " + Redaction.redact(EtcdErrors.describe(failure))
                                + " (check warden.lock.etcd.tls.trust-store and tls.key-store, that the endpoint's host is in the server's"
                                + " certificate, and that the server speaks TLS)", failure);
                    }
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return last != null ? last : new java.util.concurrent.TimeoutException("no connection to etcd at " + endpoints
                        + " within " + limit.toMillis() + " ms");
            }
            CountDownLatch changed = new CountDownLatch(1);
            channel.notifyWhenStateChanged(state, changed::countDown);
            changed.await(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
        }
    }

    /** A call that fails fast (no wait for a connection): the channel's connection failure, or null. */
    private Throwable probe() throws InterruptedException {
        CompletableFuture<?> r = send("a connection check", channel, CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                .withExecutor(DIRECT), KVGrpc.getRangeMethod(), RangeRequest.getDefaultInstance(), null);
        try {
            r.get(1, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            Throwable cause = EtcdErrors.unwrap(e);
            // The transport's failure itself, not the "failed a connection check" wrapper.
            Throwable raw = cause instanceof LockException && cause.getCause() != null ? cause.getCause() : cause;
            Status status = EtcdErrors.status(raw);
            return status != null && status.getCode() == Status.Code.UNAVAILABLE ? raw : null;
        } catch (java.util.concurrent.TimeoutException e) {
            return null;
        }
    }

    /** {@link EtcdErrors#translate}, for what the driver sends on its own streams. */
    LockException translate(String what, Throwable error) {
        return errors.translate(what, error);
    }

    /** Whether TLS is on. */
    boolean tls() {
        return tls;
    }

}
