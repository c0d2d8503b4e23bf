package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.HolderReadingDriver.Holder;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The operator's features over a namespace's locks, which {@link RedisDriver} dispatches here once it
 * checked it is open: a holder read and the listing ({@link HolderScan}), eviction and its mark, the
 * token floor and the recorded epoch; one script call each, the listing aside. They cover locks only:
 * shared names' keys ({@link SharedKeys}) are never read, listed or evicted here.
 *
 * <p>Concurrency: immutable; Lettuce's connections and the scripts are thread-safe.
 *
 * @param ttl the locks' TTL: an evicted mark stays for twice as long
 */
record Operator(String namespace, Duration ttl, Calls calls, Scripts scripts, Connections connections) {

    /** One script call reading the lock key: its value is {@code owner:token}. */
    CompletableFuture<Optional<Holder>> holder(String name) {
        Keys keys = Keys.of(namespace, name);
        return calls.retrying("the read script for " + keys.lock(), () -> scripts.read(keys.lock()).thenApply(Operator::holderOf),
                late -> { });
    }

    /** One script: compare-and-delete by token, the evicted mark for twice the TTL, the release published. */
    CompletableFuture<Boolean> evict(String name, long token) {
        Keys keys = Keys.of(namespace, name);
        return calls.retrying("the evict script for " + keys.lock(),
                () -> scripts.evict(keys, token, 2 * ttl.toMillis()).thenApply(RedisDriver::isOne), late -> { });
    }

    /** Whether the evicted mark names {@code g}'s token. */
    CompletableFuture<Boolean> evicted(RedisGrant g) {
        return calls.retrying("the read script for " + g.keys().evicted(), () -> scripts.read(g.keys().evicted())
                .thenApply(mark -> Long.toString(g.fencingToken()).equals(mark)), late -> { });
    }

    /**
     * A bounded SCAN of the namespace's lock keys, then one read per key ({@link HolderScan}); shared
     * names' keys never match, so semaphores and read-write locks are not listed.
     */
    CompletableFuture<List<NamedHolder>> holders(Duration limit) {
        String what = "listing the holders of namespace '" + namespace + "' (SCAN, then a read per lock key;"
                + " the operator's ACL user needs +scan)";
        CompletableFuture<List<NamedHolder>> listed = HolderScan.holders(connections.commands(), scripts, namespace,
                Operator::holderOf);
        return listed.orTimeout(limit.toMillis(), TimeUnit.MILLISECONDS).handle((holders, error) -> {
            if (error != null) {
                throw calls.translate(what, error);
            }
            return holders;
        });
    }

    private static Optional<Holder> holderOf(String value) {
        if (value == null) {
            return Optional.empty();
        }
        int colon = value.lastIndexOf(':');
        try {
            return Optional.of(new Holder(value.substring(0, colon), Long.parseLong(value.substring(colon + 1))));
        } catch (RuntimeException e) {
            throw new LockException(LockException.Reason.PROTOCOL, "a lock key holds '" + value
                    + "', not owner:token: is another program writing Warden's keys?");
        }
    }

    CompletableFuture<Boolean> raiseTokenFloor(RedisGrant g, long floor) {
        return calls.retrying("the floor script for " + g.keys().lock(),
                () -> scripts.raiseFloor(g.keys(), g.value(), floor).thenApply(RedisDriver::isOne), late -> { });
    }

    /**
     * One key per namespace, {@code {<namespace>:}:epoch}: inside the documented ACL key pattern (the
     * namespace's tag, open, and a star), and no lock's key (tagged {@code {<namespace>:<name>}}, names never empty).
     */
    CompletableFuture<Integer> recordEpoch(int epoch) {
        String key = "{" + namespace + ":}:epoch";
        return calls.retrying("the epoch script for " + key, () -> scripts.recordEpoch(key, epoch).thenApply(Long::intValue),
                late -> { });
    }
}
