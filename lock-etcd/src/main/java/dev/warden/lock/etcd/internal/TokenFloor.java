package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeResponse;

import java.util.concurrent.CompletableFuture;

/**
 * Raising a namespace's token floor ({@link Keys#floor}) for a holder: read the floor, and unless it is
 * high enough already, compare-and-set it on its mod revision, guarded by the holder's key; another
 * holder (of another lock) that moved the floor meanwhile makes it read and try again. Stateless.
 */
final class TokenFloor {

    /** Floor writes tried before giving up when other holders keep moving the floor. */
    static final int TRIES = 10;

    private TokenFloor() {
    }

    /** True when every later token of the namespace exceeds {@code floor}; false when the grant is gone. */
    static CompletableFuture<Boolean> raise(Calls calls, EtcdGrant g, long floor) {
        if (floor < g.fencingToken()) {
            // Every later token is already above this one.
            return CompletableFuture.completedFuture(true);
        }
        return raise(calls, g, floor, TRIES);
    }

    /**
     * Raises the floor itself to at least {@code value} while {@code g} holds (every later grant's token is then
     * above {@code value} plus its create revision); false when the grant is gone.
     */
    static CompletableFuture<Boolean> raiseValue(Calls calls, EtcdGrant g, long value) {
        return raise(calls, g, value, TRIES);
    }

    /**
     * The floor is read guarded by the holder's key, so "already high enough" is only answered while the grant
     * still holds: a floor high enough for a grant that is gone reserves nothing (another client may hold the
     * lock with a token the raise was to stay below).
     */
    private static CompletableFuture<Boolean> raise(Calls calls, EtcdGrant g, long floor, int tries) {
        ByteString floorKey = Requests.bytes(g.floorKey());
        return calls.unary("a read of the token floor " + g.floorKey(), KVGrpc.getTxnMethod(),
                        Requests.guardedFloorRead(Requests.bytes(g.key()), g.createRevision(), floorKey))
                .thenCompose(guarded -> {
                    if (!guarded.getSucceeded()) {
                        return CompletableFuture.completedFuture(false);
                    }
                    RangeResponse read = guarded.getResponses(0).getResponseRange();
                    if (Requests.floor(read) >= floor) {
                        return CompletableFuture.completedFuture(true);
                    }
                    long modRevision = read.getKvsCount() == 0 ? 0 : read.getKvs(0).getModRevision();
                    return calls.unary("raising the token floor " + g.floorKey(), KVGrpc.getTxnMethod(),
                            Requests.raiseFloor(Requests.bytes(g.key()), g.createRevision(), floorKey, modRevision, floor))
                            .thenCompose(r -> {
                                if (r.getSucceeded()) {
                                    return CompletableFuture.completedFuture(true);
                                }
                                if (r.getResponses(0).getResponseRange().getKvsCount() == 0) {
                                    return CompletableFuture.completedFuture(false);
                                }
                                if (tries <= 1) {
                                    throw new LockException(LockException.Reason.UNAVAILABLE, "the token floor "
                                            + g.floorKey() + " kept moving under " + TRIES + " writes");
                                }
                                return raise(calls, g, floor, tries - 1);
                            });
                });
    }
}
