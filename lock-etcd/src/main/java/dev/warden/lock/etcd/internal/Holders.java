package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.HolderReadingDriver.Holder;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.LeaseGrantRequest;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * An operator's reads and evictions of a lock's holder: the queue's oldest entry (whose value is the
 * owner and its attempt's id) read with the namespace's floor, its token their sum as a grant's; an
 * eviction deletes that entry, guarded by its create revision, and in the same transaction puts the
 * evicted mark {@code <ns>/!evicted/<name>} (the entry's create revision) on a lease of its own of
 * twice the TTL, which the evicted holder's next renewal reads. Stateless.
 */
final class Holders {

    private Holders() {
    }

    /** A queue's head as read: its entry, the floor; null entry when the queue is empty. */
    private record Head(KeyValue entry, long floor) {
        long token() {
            return floor + entry.getCreateRevision();
        }
    }

    static CompletableFuture<Optional<Holder>> read(Calls calls, String namespace, String name) {
        return head(calls, namespace, name).thenApply(head -> {
            if (head.entry() == null) {
                return Optional.empty();
            }
            String value = head.entry().getValue().toStringUtf8();
            int space = value.lastIndexOf(' ');
            return Optional.of(new Holder(space < 0 ? value : value.substring(0, space), head.token()));
        });
    }

    static CompletableFuture<Boolean> evict(Calls calls, String namespace, String name, long token, Duration ttl) {
        return head(calls, namespace, name).thenCompose(head -> {
            if (head.entry() == null || head.token() != token) {
                return CompletableFuture.completedFuture(false);
            }
            long markSeconds = Math.max(1, ttl.multipliedBy(2).toSeconds());
            return calls.unary("a lease for the evicted mark of " + name, LeaseGrpc.getLeaseGrantMethod(),
                    LeaseGrantRequest.newBuilder().setTTL(markSeconds).build()).thenCompose(lease -> {
                        ByteString key = head.entry().getKey();
                        long revision = head.entry().getCreateRevision();
                        TxnRequest txn = TxnRequest.newBuilder()
                                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(revision))
                                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(key)))
                                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                                        .setKey(Requests.bytes(Keys.evictedMark(Keys.queuePrefix(namespace, name))))
                                        .setValue(Requests.bytes(Long.toString(revision))).setLease(lease.getID())))
                                .build();
                        return calls.unary("the eviction of " + key.toStringUtf8(), KVGrpc.getTxnMethod(), txn)
                                .thenApply(r -> r.getSucceeded());
                    });
        });
    }

    /** Queue entries a listing reads per range call. */
    static final int PAGE = 1000;

    /**
     * Every lock of the namespace with a queue: the floor, then ranges of {@value #PAGE} keys over the
     * namespace's prefix (the namespace's own keys, {@code !...}, skipped), the oldest entry of each lock
     * kept. Cost per holder: its entries' share of a range (about {@value #PAGE} entries per round trip).
     *
     * <p>Listings cover locks only: the entries of shared names (semaphores, read-write locks, under
     * {@code !shared/}) have no single holder and are skipped with the other {@code !} keys. The ranges start
     * just after them ({@code '"'}, the byte after {@code '!'}, below every byte an encoded name starts
     * with), so many waiting permits cost a listing nothing; the check in {@link #page} stays as a guard.
     */
    static CompletableFuture<List<NamedHolder>> list(Calls calls, String namespace) {
        String ns = Keys.encode(namespace) + "/";
        ByteString end = Requests.prefixEnd(Requests.bytes(ns));
        return calls.unary("a read of the token floor", KVGrpc.getRangeMethod(), Requests.get(Requests.bytes(Keys.floor(namespace))))
                .thenCompose(floor -> page(calls, ns, Requests.bytes(ns + "\""), end, new java.util.TreeMap<>())
                        .thenApply(oldest -> {
                            long base = Requests.floor(floor);
                            List<NamedHolder> holders = new ArrayList<>(oldest.size());
                            oldest.forEach((encodedName, kv) -> {
                                String value = kv.getValue().toStringUtf8();
                                int space = value.lastIndexOf(' ');
                                holders.add(new NamedHolder(Keys.decode(encodedName), new Holder(
                                        space < 0 ? value : value.substring(0, space), base + kv.getCreateRevision())));
                            });
                            return holders;
                        }));
    }

    private static CompletableFuture<java.util.Map<String, KeyValue>> page(Calls calls, String ns, ByteString from, ByteString end,
                                                                          java.util.Map<String, KeyValue> oldest) {
        return calls.unary("a range of namespace " + ns, KVGrpc.getRangeMethod(), io.etcd.jetcd.api.RangeRequest.newBuilder()
                .setKey(from).setRangeEnd(end).setLimit(PAGE).build()).thenCompose(r -> {
                    for (KeyValue kv : r.getKvsList()) {
                        String rest = kv.getKey().toStringUtf8().substring(ns.length());
                        int slash = rest.indexOf('/');
                        if (rest.startsWith("!") || slash <= 0) {
                            continue;
                        }
                        oldest.merge(rest.substring(0, slash), kv,
                                (a, b) -> a.getCreateRevision() <= b.getCreateRevision() ? a : b);
                    }
                    if (!r.getMore() || r.getKvsCount() == 0) {
                        return CompletableFuture.completedFuture(oldest);
                    }
                    ByteString last = r.getKvs(r.getKvsCount() - 1).getKey();
                    return page(calls, ns, last.concat(ByteString.copyFrom(new byte[] {0})), end, oldest);
                });
    }

    /** Whether the last eviction in the queue {@code queuePrefix} ended the entry created at {@code createRevision}. */
    static CompletableFuture<Boolean> evicted(Calls calls, String queuePrefix, long createRevision) {
        String mark = Keys.evictedMark(queuePrefix);
        return calls.unary("a read of " + mark, KVGrpc.getRangeMethod(),
                Requests.get(Requests.bytes(mark))).thenApply(r -> r.getKvsCount() == 1
                && r.getKvs(0).getValue().toStringUtf8().equals(Long.toString(createRevision)));
    }

    private static CompletableFuture<Head> head(Calls calls, String namespace, String name) {
        ByteString prefix = Requests.bytes(Keys.queuePrefix(namespace, name));
        return calls.unary("a read of the holder of " + Keys.queuePrefix(namespace, name), KVGrpc.getTxnMethod(),
                Requests.head(prefix, Requests.prefixEnd(prefix), Requests.bytes(Keys.floor(namespace)))).thenApply(r -> {
                    RangeResponse head = r.getResponses(0).getResponseRange();
                    long floor = Requests.floor(r.getResponses(1).getResponseRange());
                    return new Head(head.getKvsCount() == 0 ? null : head.getKvs(0), floor);
                });
    }
}
