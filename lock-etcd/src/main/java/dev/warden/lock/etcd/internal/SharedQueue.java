package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Share;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A shared name's queue on etcd: its requests, and what a read of it says about one entry. Entries are
 * the keys under {@link Keys#sharedPrefix}, on their sessions' leases, in arrival order by create
 * revision; each value is {@code "<weight> <owner> <attempt id>"}. An entry is granted when the weights
 * of every entry created before it, plus its own, fit its limit ({@link Share#fitsBehind}).
 *
 * <p>A read goes through the entries ahead in arrival order, {@value #PAGE} a page (etcd filters and
 * sorts the whole prefix for each page, but answers with the page only, so a long queue never makes an
 * answer larger than gRPC accepts), and reads no further page once what it read does not fit: the rest
 * cannot change that. Every entry ahead in a page already received is kept, though, even past the first
 * that does not fit: a wait ({@link SharedWait}) that knows all that is ahead wakes only on the deletion
 * that lets it in, where one that knew only the entries up to the first misfit would wake on any
 * deletion among them (every waiter of a semaphore of n knows the same first n entries), poll, and wait
 * again. Pages are read at the current revision, each later than the one before; since no entry is ever
 * created ahead of an existing one, a later page can only miss entries that went, so the sum read
 * is never below the sum at the last page. Stateless.
 */
final class SharedQueue {

    /** Entries a read asks for at once. */
    static final int PAGE = 500;

    private SharedQueue() {
    }

    /** An entry ahead: its create revision and weight. */
    record Entry(long createRevision, long weight) {
    }

    /**
     * What a read found ahead of one entry: the entries read, in arrival order, and their weight;
     * {@code complete} when they are all that is ahead (false when the read stopped at a page that
     * did not fit, with more pages after it; one that fits is always complete); {@code revision} the
     * revision of the first page, from which a watch misses nothing.
     */
    record Ahead(Map<ByteString, Entry> entries, long weight, boolean complete, long revision) {

        boolean fits(Share share) {
            return share.fitsBehind(weight);
        }
    }

    /**
     * Unless {@code marker} or {@code key} exists: creates {@code key} on {@code lease}, then reads it and
     * the first page of the queue (it is the newest entry). Otherwise reads {@code key} and {@code marker}.
     */
    static TxnRequest create(ByteString marker, ByteString key, ByteString value, long lease, ByteString prefix,
                             ByteString prefixEnd) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(marker).setTarget(Compare.CompareTarget.VERSION)
                        .setResult(Compare.CompareResult.EQUAL).setVersion(0))
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(0))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                        .setKey(key).setValue(value).setLease(lease)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(page(prefix, prefixEnd, 0, 0)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(marker).setKeysOnly(true)))
                .build();
    }

    /** Reads {@code key} (is it still the entry created at {@code mine}?) and the first page ahead of it. */
    static TxnRequest recheck(ByteString key, long mine, ByteString prefix, ByteString prefixEnd) {
        return TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(page(prefix, prefixEnd, 0, mine - 1)))
                .build();
    }

    /**
     * Entries created from {@code minCreate} to {@code maxCreate} (0: unbounded), oldest first, at most
     * {@value #PAGE}.
     */
    static RangeRequest page(ByteString prefix, ByteString prefixEnd, long minCreate, long maxCreate) {
        return RangeRequest.newBuilder().setKey(prefix).setRangeEnd(prefixEnd)
                .setMinCreateRevision(minCreate).setMaxCreateRevision(maxCreate)
                .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.ASCEND)
                .setLimit(PAGE).build();
    }

    /** Which entries created from {@code minCreate} to {@code maxCreate} are still there: keys only, no limit. */
    static RangeRequest present(ByteString prefix, ByteString prefixEnd, long minCreate, long maxCreate) {
        return RangeRequest.newBuilder().setKey(prefix).setRangeEnd(prefixEnd)
                .setMinCreateRevision(minCreate).setMaxCreateRevision(maxCreate).setKeysOnly(true).build();
    }

    /**
     * Deletes {@code key} only while it is the granted entry: created at {@code createRevision} and
     * holding {@code value} (the owner and attempt): a stale grant never deletes a later one.
     */
    static TxnRequest release(ByteString key, long createRevision, ByteString value) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(createRevision))
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.VALUE)
                        .setResult(Compare.CompareResult.EQUAL).setValue(value))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(key)))
                .build();
    }

    /** An entry's value: its weight first, so a reader parses it without knowing the owner's form. */
    static ByteString value(Share share, String owner, String unique) {
        return Requests.bytes(share.weight() + " " + owner + " " + unique);
    }

    /**
     * The entries ahead of the one created at {@code mine}, from {@code first} (a page as {@link #page}
     * asks, read at {@code revision}) on, reading further pages while they still fit {@code share}.
     */
    static CompletableFuture<Ahead> ahead(Calls calls, String prefix, ByteString prefixBytes, ByteString prefixEnd,
                                          long mine, Share share, RangeResponse first, long revision) {
        return collect(calls, prefix, prefixBytes, prefixEnd, mine, share, first, new LinkedHashMap<>(), 0, revision);
    }

    private static CompletableFuture<Ahead> collect(Calls calls, String prefix, ByteString prefixBytes, ByteString prefixEnd,
                                                    long mine, Share share, RangeResponse page, Map<ByteString, Entry> read,
                                                    long weight, long revision) {
        long sum = weight;
        long last = 0;
        for (KeyValue kv : page.getKvsList()) {
            if (kv.getCreateRevision() >= mine) {
                return CompletableFuture.completedFuture(ahead(read, sum, true, revision));
            }
            long w = weight(kv);
            read.put(kv.getKey(), new Entry(kv.getCreateRevision(), w));
            // At most PAGE weights of at most Integer.MAX_VALUE a page, and a further page only while the
            // sum fits a limit: a long never overflows.
            sum += w;
            last = kv.getCreateRevision();
        }
        if (!page.getMore() || page.getKvsCount() == 0) {
            return CompletableFuture.completedFuture(ahead(read, sum, true, revision));
        }
        if (!share.fitsBehind(sum)) {
            return CompletableFuture.completedFuture(ahead(read, sum, false, revision));
        }
        long total = sum;
        return calls.unary("a read of shared queue " + prefix, KVGrpc.getRangeMethod(),
                        page(prefixBytes, prefixEnd, last + 1, mine - 1))
                .thenCompose(next -> collect(calls, prefix, prefixBytes, prefixEnd, mine, share, next, read, total, revision));
    }

    private static Ahead ahead(Map<ByteString, Entry> read, long weight, boolean complete, long revision) {
        return new Ahead(Collections.unmodifiableMap(read), weight, complete, revision);
    }

    /** The weight an entry's value starts with. */
    static long weight(KeyValue kv) {
        String value = kv.getValue().toStringUtf8();
        int space = value.indexOf(' ');
        try {
            long w = Long.parseLong(space < 0 ? value : value.substring(0, space));
            if (w < 1) {
                throw new NumberFormatException("not positive");
            }
            return w;
        } catch (NumberFormatException e) {
            throw new LockException(LockException.Reason.PROTOCOL, "shared queue entry " + kv.getKey().toStringUtf8()
                    + " does not start with a weight: '" + value + "'");
        }
    }
}
