package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;

import java.util.concurrent.CompletableFuture;

/**
 * The namespace's recorded fencing epoch ({@link Keys#epoch}): read, and when the client's is higher,
 * compare-and-set on the key's mod revision; another client that moved it first makes it read again.
 * Stateless.
 */
final class EpochRecord {

    private static final int TRIES = 10;

    private EpochRecord() {
    }

    /** The epoch recorded before; records {@code epoch} when it is higher. */
    static CompletableFuture<Integer> record(Calls calls, String key, int epoch) {
        return record(calls, Requests.bytes(key), key, epoch, TRIES);
    }

    private static CompletableFuture<Integer> record(Calls calls, ByteString key, String name, int epoch, int tries) {
        return calls.unary("a read of the fencing epoch " + name, KVGrpc.getRangeMethod(), Requests.get(key)).thenCompose(read -> {
            int recorded = (int) Requests.floor(read);
            if (recorded >= epoch) {
                return CompletableFuture.completedFuture(recorded);
            }
            long modRevision = read.getKvsCount() == 0 ? 0 : read.getKvs(0).getModRevision();
            TxnRequest write = TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.MOD)
                            .setResult(Compare.CompareResult.EQUAL).setModRevision(modRevision))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                            .setKey(key).setValue(Requests.bytes(Integer.toString(epoch)))))
                    .build();
            return calls.unary("recording the fencing epoch " + name, KVGrpc.getTxnMethod(), write).thenCompose(r -> {
                if (r.getSucceeded()) {
                    return CompletableFuture.completedFuture(recorded);
                }
                if (tries <= 1) {
                    throw new LockException(LockException.Reason.UNAVAILABLE, "the fencing epoch " + name
                            + " kept moving under " + TRIES + " writes");
                }
                return record(calls, key, name, epoch, tries - 1);
            });
        });
    }
}
