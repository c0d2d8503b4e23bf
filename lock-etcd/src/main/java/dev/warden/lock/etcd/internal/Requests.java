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
     * two newest entries of its queue (their keys and revisions: a lock's entries are told apart by
     * those alone) and the lock's token floor. Otherwise reads {@code key} and {@code marker}.
     */
    static TxnRequest create(ByteString marker, ByteString key, ByteString value, long lease, ByteString prefix,
                             ByteString prefixEnd, ByteString floor) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(marker).setTarget(Compare.CompareTarget.VERSION)
                        .setResult(Compare.CompareResult.EQUAL).setVersion(0))
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(0))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                        .setKey(key).setValue(value).setLease(lease)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                        .setKey(prefix).setRangeEnd(prefixEnd).setKeysOnly(true)
                        .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                        .setLimit(2)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(floor)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(marker).setKeysOnly(true)))
                .build();
    }

    /**
     * Reads {@code key}, the newest entry of its queue created before {@code createRevision} (keys and
     * revisions only), and the lock's token floor.
     */
    static TxnRequest recheck(ByteString key, long createRevision, ByteString prefix, ByteString prefixEnd,
                              ByteString floor) {
        return TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                        .setKey(prefix).setRangeEnd(prefixEnd).setMaxCreateRevision(createRevision - 1).setKeysOnly(true)
                        .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                        .setLimit(1)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(floor)))
                .build();
    }

    /** Reads the oldest entry of a queue (its holder, or the waiter made next) and the token floor. */
    static TxnRequest head(ByteString prefix, ByteString prefixEnd, ByteString floor) {
        return TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                        .setKey(prefix).setRangeEnd(prefixEnd)
                        .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.ASCEND)
                        .setLimit(1)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(floor)))
                .build();
    }

    /**
     * Sets the token floor {@code floor} to {@code value} while {@code key} has create revision
     * {@code createRevision} (a holder writes it) and the floor is as read (mod revision
     * {@code floorModRevision}, 0 when absent), so a floor raised meanwhile by another holder is never
     * lowered. On failure reads {@code key}: gone means the grant is.
     */
    /**
     * Reads the token floor {@code floor} while {@code key} has create revision {@code createRevision}: a failed
     * compare (nothing read) means the grant is gone. A floor read so is one a holder saw while still holding.
     */
    static TxnRequest guardedFloorRead(ByteString key, long createRevision, ByteString floor) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(createRevision))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(floor)))
                .build();
    }

    static TxnRequest raiseFloor(ByteString key, long createRevision, ByteString floor, long floorModRevision, long value) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(createRevision))
                .addCompare(Compare.newBuilder().setKey(floor).setTarget(Compare.CompareTarget.MOD)
                        .setResult(Compare.CompareResult.EQUAL).setModRevision(floorModRevision))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                        .setKey(floor).setValue(bytes(Long.toString(value)))))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key).setKeysOnly(true)))
                .build();
    }

    /** The token floor a range of the floor key read: 0 when absent. */
    static long floor(io.etcd.jetcd.api.RangeResponse read) {
        if (read.getKvsCount() == 0) {
            return 0;
        }
        String text = read.getKvs(0).getValue().toStringUtf8();
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new dev.warden.lock.LockException(dev.warden.lock.LockException.Reason.PROTOCOL,
                    "the token floor " + read.getKvs(0).getKey().toStringUtf8() + " holds '" + text + "', not a number");
        }
    }

    /** Deletes {@code key} only while its create revision is {@code createRevision}. */
    static TxnRequest guardedDelete(ByteString key, long createRevision) {
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(createRevision))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(key)))
                .build();
    }

    /** Writes {@code marker} on {@code lease}, and deletes {@code key} if its value is {@code value}. */
    static TxnRequest deleteIfOwnedAndMark(ByteString key, ByteString value, ByteString marker, long lease) {
        RequestOp mark = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                .setKey(marker).setValue(ByteString.EMPTY).setLease(lease)).build();
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.CompareTarget.VALUE)
                        .setResult(Compare.CompareResult.EQUAL).setValue(value))
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
