package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
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
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
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
 *   <li>Errors become {@link LockException}s that name the endpoints.</li>
 *   <li>The channel fails over between members in the order given ({@code pick_first}); HTTP/2
 *       pings notice a frozen member.</li>
 * </ul>
 */
final class Calls {

    /** Runs gRPC callbacks on the I/O thread that received the answer. */
    private static final Executor DIRECT = Runnable::run;
    private static final Metadata.Key<String> HAS_LEADER = Metadata.Key.of("hasleader", Metadata.ASCII_STRING_MARSHALLER);

    private final ScheduledExecutorService timers;
    private final Executor completions;
    private final Duration timeout;
    private final String endpoints;
    private final EventLoopGroup io;
    private final ManagedChannel channel;
    private final Channel withLeader;

    Calls(ScheduledExecutorService timers, Executor completions, Duration timeout, String endpoints,
          List<InetSocketAddress> members, Duration connectTimeout, ThreadFactory ioThreads) {
        this.timers = timers;
        this.completions = completions;
        this.timeout = timeout;
        this.endpoints = endpoints;
        this.io = new MultiThreadIoEventLoopGroup(1, ioThreads, NioIoHandler.newFactory());
        this.channel = NettyChannelBuilder.forTarget(Members.target())
                .setNameResolverArg(Members.MEMBERS, members)
                .eventLoopGroup(io)
                .channelType(NioSocketChannel.class)
                .executor(completions)
                .offloadExecutor(completions)
                .usePlaintext()
                .defaultLoadBalancingPolicy("pick_first")
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                // A frozen member keeps its TCP connection open: HTTP/2 pings (gRPC's minimum interval is
                // 10 s; etcd accepts pings every 5 s while calls are open) notice it and fail over.
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveTimeout(3, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(false)
                // A fixed window: no flow-control pings (window auto-tuning) on every answer.
                .flowControlWindow(NettyChannelBuilder.DEFAULT_FLOW_CONTROL_WINDOW)
                .build();
        Metadata leader = new Metadata();
        leader.put(HAS_LEADER, "true");
        this.withLeader = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(leader));
    }

    private CallOptions bounded(Duration limit) {
        return CallOptions.DEFAULT
                .withDeadlineAfter(limit.toNanos(), TimeUnit.NANOSECONDS)
                .withWaitForReady()
                .withExecutor(DIRECT);
    }

    /** One unary call, bounded by the request timeout. */
    <Q, R> CompletableFuture<R> unary(String what, MethodDescriptor<Q, R> method, Q request) {
        return unary(what, timeout, method, request);
    }

    /**
     * One unary call bounded by {@code limit} through its gRPC deadline, which also covers waiting
     * for a ready connection; completes on the I/O thread.
     */
    <Q, R> CompletableFuture<R> unary(String what, Duration limit, MethodDescriptor<Q, R> method, Q request) {
        CompletableFuture<R> result = new CompletableFuture<>();
        try {
            ClientCall<Q, R> call = channel.newCall(method, bounded(limit));
            call.start(new ClientCall.Listener<R>() {
                private R value;

                @Override
                public void onMessage(R message) {
                    value = message;
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    if (status.isOk() && value != null) {
                        result.complete(value);
                    } else {
                        result.completeExceptionally(translate(what, status.isOk()
                                ? Status.INTERNAL.withDescription("no answer").asRuntimeException()
                                : status.asRuntimeException(trailers)));
                    }
                }
            }, new Metadata());
            call.request(2);
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException e) {
            result.completeExceptionally(translate(what, e));
        }
        return result;
    }

    /**
     * One keep-alive of {@code leaseId} on a stream of its own, bounded by the request timeout:
     * the server's answer, whose TTL is 0 when the lease is gone.
     */
    CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(String what, long leaseId) {
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
                    if (!result.isDone()) {
                        result.completeExceptionally(translate(what, status.isOk()
                                ? Status.INTERNAL.withDescription("stream ended without an answer").asRuntimeException()
                                : status.asRuntimeException(trailers)));
                    }
                }
            }, new Metadata());
            call.request(1);
            call.sendMessage(LeaseKeepAliveRequest.newBuilder().setID(leaseId).build());
            // The server answers a request before it reads the end of the stream.
            call.halfClose();
        } catch (RuntimeException e) {
            result.completeExceptionally(translate(what, e));
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
                onEnd.accept(status.isOk() ? null : translate(what, status.asRuntimeException(trailers)));
            }
        }, new Metadata());
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

    LockException translate(String what, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        return new LockException(LockException.Reason.UNAVAILABLE,
                "etcd at " + endpoints + " failed " + what + ": " + cause.getMessage(), cause);
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
