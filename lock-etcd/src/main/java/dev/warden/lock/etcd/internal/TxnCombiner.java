package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Sends the driver's guarded write transactions (queue entries created, grants released) that are
 * ready at the same time as one etcd transaction. On a busy client, most of etcd's work per
 * acquisition is per call, not per key: a gRPC call and a Raft entry each. Two calls of the
 * driver's own may be on their way at once; a transaction started while both are waits, and the
 * ones waiting go together as soon as one answers. A transaction started on an idle client goes at
 * once, alone, as before.
 *
 * <p>Only transactions that cannot see each other are combined, so the combined one does what
 * sending them one after the other, in any order, would do: no member writes a key another member
 * compares, reads or writes. The combined transaction holds every member's compares and its
 * success operations, in order, and no failure operations; each member gets the header and its own
 * slice of the responses. When a compare fails, nothing was written, and each member is sent again
 * alone, to learn which one's compare failed (it then gets its own failure responses). When etcd
 * refuses the combined call (a lease one member names is gone, a permission one member lacks),
 * nothing was written either, and each member is sent alone. When the outcome is unknown (a
 * deadline, a lost connection), every member fails with that error, as its own call would have.
 *
 * <p>A combined call has the longest time left of its members; each member still fails at its own
 * deadline (a timeout: the outcome unknown), whether it waits or is on its way, and one whose deadline
 * passed while it waited is never sent. Members that read ranges of more than a few keys (a shared name's page of
 * entries) are not combined, so no combined answer grows past what one call may carry.
 *
 * <p>Concurrency: {@code waiting}, {@code onTheirWay}, {@code answersToDrain}, {@code draining},
 * {@code alone} and {@code combinedCalls} are guarded by {@code this}; calls are sent outside the monitor.
 */
final class TxnCombiner {

    private static final Logger log = LoggerFactory.getLogger(TxnCombiner.class);

    /** etcd's default {@code --max-txn-ops}: the compares, and the success operations, of one transaction. */
    static final int MAX_TXN_OPS = 128;

    private final Calls calls;
    private final Duration timeout;
    private final int maxOnTheirWay;
    private final ArrayDeque<Member> waiting = new ArrayDeque<>();
    private int onTheirWay;
    /** Answers whose next batch is still to be sent, and whether a thread is sending them: see {@link #answered}. */
    private int answersToDrain;
    private boolean draining;
    /** Set once etcd refuses a combined transaction for its size (a server run with a lower {@code --max-txn-ops}). */
    private boolean alone;
    private long combinedCalls;

    TxnCombiner(Calls calls, Duration timeout, int maxOnTheirWay) {
        this.calls = calls;
        this.timeout = timeout;
        this.maxOnTheirWay = maxOnTheirWay;
    }

    /** Sends {@code request}, a guarded write, perhaps together with others; completes on the I/O thread. */
    CompletableFuture<TxnResponse> txn(String what, TxnRequest request) {
        return txn(what, request, timeout);
    }

    /** As {@link #txn(String, TxnRequest)}, bounded by {@code limit} rather than the request timeout. */
    CompletableFuture<TxnResponse> txn(String what, TxnRequest request, Duration limit) {
        Shape shape = Shape.of(request);
        if (shape == null) {
            return calls.unary(what, limit, KVGrpc.getTxnMethod(), request);
        }
        Member m = new Member(what, request, shape, System.nanoTime() + limit.toNanos());
        List<Member> batch;
        synchronized (this) {
            waiting.add(m);
            batch = onTheirWay >= maxOnTheirWay ? null : nextBatch();
        }
        if (batch == null || !batch.contains(m)) {
            failAtDeadline(m);
        }
        send(batch);
        return m.result;
    }

    /** How many combined transactions (of two members or more) were sent: for tests. */
    synchronized long combinedCalls() {
        return combinedCalls;
    }

    /** Holding {@code this}: takes the next batch off the queue and counts it on its way; null when none waits. */
    private List<Member> nextBatch() {
        if (waiting.isEmpty()) {
            return null;
        }
        List<Member> batch = new ArrayList<>();
        int compares = 0;
        int ops = 0;
        for (Iterator<Member> it = waiting.iterator(); it.hasNext(); ) {
            Member m = it.next();
            if (!batch.isEmpty() && (alone || compares + m.request.getCompareCount() > MAX_TXN_OPS
                    || ops + m.request.getSuccessCount() > MAX_TXN_OPS)) {
                break;
            }
            if (batch.stream().anyMatch(b -> b.shape.conflicts(m.shape))) {
                // Left for a later batch, and so is everything behind it that it might conflict with: order kept.
                break;
            }
            batch.add(m);
            compares += m.request.getCompareCount();
            ops += m.request.getSuccessCount();
            it.remove();
        }
        onTheirWay++;
        return batch;
    }

    /**
     * Sends {@code batch} (nothing when null): one member as its own call, more as one transaction;
     * a member whose deadline has passed fails without being sent.
     */
    private void send(List<Member> batch) {
        if (batch == null) {
            return;
        }
        List<Member> live = new ArrayList<>(batch.size());
        for (Member m : batch) {
            if (m.expired()) {
                m.result.completeExceptionally(timedOut(m, "before it was sent"));
            } else if (!m.result.isDone()) {
                live.add(m);
            }
        }
        if (live.isEmpty()) {
            answered();
        } else if (live.size() > 1) {
            sendCombined(live);
        } else {
            Member m = live.get(0);
            calls.unary(m.what, m.remaining(), KVGrpc.getTxnMethod(), m.request).whenComplete((r, error) -> {
                answered();
                complete(m, r, error);
            });
        }
    }

    private void sendCombined(List<Member> batch) {
        TxnRequest.Builder combined = TxnRequest.newBuilder();
        Duration limit = Duration.ZERO;
        int responses = 0;
        for (Member m : batch) {
            combined.addAllCompare(m.request.getCompareList()).addAllSuccess(m.request.getSuccessList());
            responses += m.request.getSuccessCount();
            Duration left = m.remaining();
            limit = left.compareTo(limit) > 0 ? left : limit;
        }
        for (Member m : batch) {
            // Each member fails at its own deadline, as its own call would, whatever the combined call's is.
            failAtDeadline(m);
        }
        synchronized (this) {
            combinedCalls++;
        }
        batch.forEach(m -> m.sent = true);
        int expected = responses;
        String what = batch.get(0).what + " (with " + (batch.size() - 1) + " more in one transaction)";
        calls.unary(what, limit, KVGrpc.getTxnMethod(), combined.build()).whenComplete((r, error) -> {
            answered();
            if (error == null && r.getSucceeded() && r.getResponsesCount() != expected) {
                for (Member m : batch) {
                    m.result.completeExceptionally(new LockException(LockException.Reason.PROTOCOL,
                            "etcd answered a transaction of " + expected + " operations with " + r.getResponsesCount()
                                    + " responses (" + m.what + ")"));
                }
            } else if (error == null && r.getSucceeded()) {
                int from = 0;
                for (Member m : batch) {
                    int n = m.request.getSuccessCount();
                    m.result.complete(TxnResponse.newBuilder().setHeader(r.getHeader()).setSucceeded(true)
                            .addAllResponses(r.getResponsesList().subList(from, from + n)).build());
                    from += n;
                }
            } else if (error == null || refused(error)) {
                // Nothing was written: each member alone says which compare failed, or which member etcd refuses.
                for (Member m : batch) {
                    if (!m.result.isDone()) {
                        calls.unary(m.what, m.remaining(), KVGrpc.getTxnMethod(), m.request)
                                .whenComplete((one, e) -> complete(m, one, e));
                    }
                }
            } else {
                Status status = EtcdErrors.status(error);
                for (Member m : batch) {
                    m.result.completeExceptionally(status == null ? error : calls.translate(m.what
                            + " (in one transaction with " + (batch.size() - 1) + " more)", status.asRuntimeException()));
                }
            }
        });
    }

    /** Fails {@code m} at its deadline unless answered first (once per member: waiting, then sent). */
    private void failAtDeadline(Member m) {
        synchronized (m) {
            if (m.timed || m.result.isDone()) {
                return;
            }
            m.timed = true;
        }
        java.util.concurrent.ScheduledFuture<?> timer = calls.schedule(() -> m.result.completeExceptionally(
                timedOut(m, m.sent ? "in a combined transaction" : "before it was sent")), m.remaining().toNanos());
        if (timer != null) {
            m.result.whenComplete((r, e) -> timer.cancel(false));
        }
    }

    private LockException timedOut(Member m, String where) {
        return calls.translate(m.what, Status.DEADLINE_EXCEEDED.withDescription("the request timeout passed " + where)
                .asRuntimeException());
    }

    /**
     * One call answered: the next batch, if one waits, goes now. A call that fails at once (a channel
     * shut down) answers inside {@link #send}; the thread already sending batches sends the next one
     * too, in a loop, so a queue of such failures never deepens the stack.
     */
    private void answered() {
        synchronized (this) {
            onTheirWay--;
            answersToDrain++;
            if (draining) {
                return;
            }
            draining = true;
        }
        while (true) {
            List<Member> next;
            synchronized (this) {
                if (answersToDrain == 0) {
                    draining = false;
                    return;
                }
                answersToDrain--;
                next = nextBatch();
            }
            send(next);
        }
    }

    private static void complete(Member m, TxnResponse r, Throwable error) {
        if (error != null) {
            m.result.completeExceptionally(error);
        } else {
            m.result.complete(r);
        }
    }

    /**
     * Whether etcd answered the combined call with a refusal, which writes nothing: an error of etcd's
     * own ({@code etcdserver: ...}: a lease not found, a permission denied, too many operations), never
     * an unknown outcome (a deadline, a lost or cancelled call, an internal error) nor a refusal of the
     * client's own (an answer too large to take), after which the transaction may have been applied.
     */
    private boolean refused(Throwable error) {
        Status status = EtcdErrors.status(error);
        if (status == null) {
            return false;
        }
        String description = String.valueOf(status.getDescription());
        switch (status.getCode()) {
            case DEADLINE_EXCEEDED, UNAVAILABLE, CANCELLED, UNKNOWN, INTERNAL, ABORTED, DATA_LOSS, OK:
                return false;
            default:
                if (!description.startsWith("etcdserver: ")) {
                    return false;
                }
                if (description.contains("too many operations in txn request")) {
                    synchronized (this) {
                        if (!alone) {
                            log.info("etcd refuses transactions of {} operations or fewer (its --max-txn-ops is below "
                                    + "the default): this client sends its transactions one by one", MAX_TXN_OPS);
                        }
                        alone = true;
                    }
                }
                return true;
        }
    }

    private static final class Member {
        final String what;
        final TxnRequest request;
        final Shape shape;
        final long deadline;
        final CompletableFuture<TxnResponse> result = new CompletableFuture<>();
        /** Guarded by the member: whether a timer fails it at its deadline. */
        boolean timed;
        /** Set before its combined call is sent; read by the timer (a late read only words the message). */
        volatile boolean sent;

        Member(String what, TxnRequest request, Shape shape, long deadline) {
            this.what = what;
            this.request = request;
            this.shape = shape;
            this.deadline = deadline;
        }

        boolean expired() {
            return deadline - System.nanoTime() <= 0;
        }

        /** What is left of the member's request timeout (at least a millisecond), counted from when it was started. */
        Duration remaining() {
            return Duration.ofNanos(Math.max(1_000_000L, deadline - System.nanoTime()));
        }
    }

    /**
     * The keys a transaction writes (single keys, put or deleted) and the keys and ranges it compares
     * or reads; null when it is not one we combine (a ranged delete, a nested transaction, a read of a
     * range of more than {@value #MAX_RANGE_LIMIT} keys or without a limit, a transaction that writes nothing).
     */
    record Shape(List<ByteString> writes, List<ByteString[]> reads) {

        /** The most keys a combined member's ranged read may ask for: a lock's queue read asks for two. */
        static final int MAX_RANGE_LIMIT = 16;

        private static final Comparator<ByteString> ORDER = ByteString.unsignedLexicographicalComparator();

        static Shape of(TxnRequest request) {
            List<ByteString> writes = new ArrayList<>();
            List<ByteString[]> reads = new ArrayList<>();
            for (Compare c : request.getCompareList()) {
                reads.add(new ByteString[] {c.getKey(), c.getRangeEnd()});
            }
            for (RequestOp op : request.getSuccessList()) {
                switch (op.getRequestCase()) {
                    case REQUEST_PUT -> writes.add(op.getRequestPut().getKey());
                    case REQUEST_DELETE_RANGE -> {
                        if (!op.getRequestDeleteRange().getRangeEnd().isEmpty()) {
                            return null;
                        }
                        writes.add(op.getRequestDeleteRange().getKey());
                    }
                    case REQUEST_RANGE -> {
                        RangeRequest r = op.getRequestRange();
                        if (!r.getRangeEnd().isEmpty() && (r.getLimit() <= 0 || r.getLimit() > MAX_RANGE_LIMIT)) {
                            return null;
                        }
                        reads.add(new ByteString[] {r.getKey(), r.getRangeEnd()});
                    }
                    default -> {
                        return null;
                    }
                }
            }
            return writes.isEmpty() ? null : new Shape(writes, reads);
        }

        /** Whether either transaction writes a key the other compares, reads or writes. */
        boolean conflicts(Shape other) {
            return touches(other.writes) || other.touches(writes);
        }

        private boolean touches(List<ByteString> keys) {
            for (ByteString k : keys) {
                if (writes.contains(k)) {
                    return true;
                }
                for (ByteString[] r : reads) {
                    if (covers(r[0], r[1], k)) {
                        return true;
                    }
                }
            }
            return false;
        }

        /** etcd's ranges: an empty end is the key alone; {@code "\0"} is every key from the start on. */
        private static boolean covers(ByteString start, ByteString end, ByteString key) {
            if (end.isEmpty()) {
                return start.equals(key);
            }
            boolean toTheEnd = end.size() == 1 && end.byteAt(0) == 0;
            return ORDER.compare(key, start) >= 0 && (toTheEnd || ORDER.compare(key, end) < 0);
        }
    }
}
