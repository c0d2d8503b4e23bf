package dev.warden.lock.etcd.internal;

import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves a channel off a member that has stopped answering. A frozen member (or one behind a silent
 * network) keeps its connection open: HTTP/2 pings notice that only after gRPC's 10 s minimum, and
 * pick_first then reconnects to the same member, whose handshake never ends. So when every call has
 * run into its deadline for {@code stallAfter} (no answer of any kind, not even an error), the
 * member the last of them was sent to goes last in the {@link Members.Order} and the channel is
 * idled: the next call connects afresh, starting from another member. Calls already sent finish or
 * time out on the old connection.
 *
 * <p>A member that answers with errors at once (no leader, a refused token) is not stalled. A leader's
 * freeze stalls its followers' forwarded writes until the election; moving then costs one reconnect.
 *
 * <p>Concurrency: {@code lastAnswer} and {@code lastMember} are volatile writes per call (a race
 * between answers keeps either member, both were answering); {@code lastMove} is compared and set,
 * so one of many calls timing out together moves the channel, once per {@code stallAfter}.
 */
final class StalledMember {

    private static final Logger log = LoggerFactory.getLogger(StalledMember.class);

    private final Members.Order order;
    private final ManagedChannel channel;
    private final long stallAfterNanos;
    private final Executor executor;
    private final AtomicLong lastMove;
    private volatile long lastAnswer;
    /** The member of the last answer since the channel last moved; null before one. */
    private volatile SocketAddress lastMember;

    StalledMember(Members.Order order, ManagedChannel channel, Duration stallAfter, Executor executor) {
        this.order = order;
        this.channel = channel;
        this.stallAfterNanos = stallAfter.toNanos();
        this.executor = executor;
        long now = System.nanoTime();
        this.lastAnswer = now;
        this.lastMove = new AtomicLong(now);
    }

    /** Notes how {@code call} ended; see the class comment. */
    void ended(Status status, ClientCall<?, ?> call) {
        long now = System.nanoTime();
        if (status.getCode() != Status.Code.DEADLINE_EXCEEDED) {
            // UNAVAILABLE may be the client's own (a connection the keepalive dropped), so it is no answer;
            // a member's "no leader" is UNAVAILABLE too, but it comes at once, never as a deadline.
            if (status.getCode() != Status.Code.CANCELLED && status.getCode() != Status.Code.UNAVAILABLE) {
                SocketAddress from = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                if (from != null) {
                    lastMember = from;
                }
                lastAnswer = now;
            }
            return;
        }
        long moved = lastMove.get();
        if (now - Math.max(lastAnswer, moved) < stallAfterNanos || !lastMove.compareAndSet(moved, now)) {
            return;
        }
        // The call's member when gRPC says (not for a call that waited for a connection), else the
        // member of the last answer, else (no answer since the last move) the one the channel moved to.
        SocketAddress member = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        SocketAddress stalled = member != null ? member : lastMember;
        lastMember = null;
        long silentMillis = (now - lastAnswer) / 1_000_000;
        // Off the I/O thread: matching a member given by host name may look the name up.
        executor.execute(() -> {
            InetSocketAddress demoted = order.demote(stalled);
            InetSocketAddress next = order.current().get(0);
            log.warn("etcd member {}:{} has answered nothing for {} ms; connecting to {}:{} instead",
                    demoted.getHostString(), demoted.getPort(), silentMillis, next.getHostString(), next.getPort());
            channel.enterIdle();
        });
    }
}
