package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;

/** The etcd requests of the lock path, built directly as protocol messages. */
final class Requests {

    private Requests() {
    }

    static ByteString bytes(String s) {
        return ByteString.copyFromUtf8(s);
    }

    /** The end of the range of every key starting with {@code prefix} (its last byte plus one). */
    static ByteString prefixEnd(ByteString prefix) {
        byte[] end = prefix.toByteArray();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return ByteString.copyFrom(end, 0, i + 1);
            }
        }
        // Every byte 0xff: to the end of the keyspace.
        return ByteString.copyFrom(new byte[] {0});
    }

    /**
     * Unless {@code marker} or {@code key} exists: creates {@code key} on {@code lease} and reads the
     * two newest entries of its queue. Otherwise reads {@code key} and {@code marker}.
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
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                        .setKey(prefix).setRangeEnd(prefixEnd)
                        .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                        .setLimit(2)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(marker).setKeysOnly(true)))
                .build();
    }

    /** Reads {@code key} and the newest entry of its queue created before {@code createRevision}. */
    static TxnRequest recheck(ByteString key, long createRevision, ByteString prefix, ByteString prefixEnd) {
        return TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                        .setKey(prefix).setRangeEnd(prefixEnd).setMaxCreateRevision(createRevision - 1)
                        .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                        .setLimit(1)))
                .build();
    }

    /** Deletes {@code key} only while its create revision is {@code createRevision}. */
    static TxnRequest guardedDelete(ByteString key, long createRevision) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(createRevision))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(key)))
                .build();
    }

    /** Writes {@code marker} on {@code lease}, and deletes {@code key} if its value is {@code owner}. */
    static TxnRequest deleteIfOwnedAndMark(ByteString key, ByteString owner, ByteString marker, long lease) {
        RequestOp mark = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                .setKey(marker).setValue(ByteString.EMPTY).setLease(lease)).build();
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.VALUE)
                        .setResult(Compare.CompareResult.EQUAL).setValue(owner))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(key)))
                .addSuccess(mark)
                .addFailure(mark)
                .build();
    }

    static RangeRequest get(ByteString key) {
        return RangeRequest.newBuilder().setKey(key).build();
    }

    static RangeRequest keyOnly(ByteString key) {
        return RangeRequest.newBuilder().setKey(key).setKeysOnly(true).build();
    }
}
