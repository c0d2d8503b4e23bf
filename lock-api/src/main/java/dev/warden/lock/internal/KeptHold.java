package dev.warden.lock.internal;

import dev.warden.lock.internal.time.Timekeeper.Alarm;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;

import java.util.concurrent.CompletableFuture;

/**
 * One server hold a {@link LeaseCache} keeps: the server's grant, the block of tokens it reserved, what the
 * cache does with it now (lent to a lease, or parked with its linger timer), and the watch on its name's
 * contenders.
 *
 * <p>Concurrency: every mutable field here and in {@link Watch} is guarded by the owning cache's monitor.
 */
final class KeptHold {

    /** The watch on one name's contenders, handed from a used-up block's hold to the next. */
    static final class Watch {
        /** Completes when the watch is in place (null: it could not be), never exceptionally. */
        final CompletableFuture<ContenderWatch> started = new CompletableFuture<>();
        ContenderWatch watch;
        boolean ended;
    }

    final String name;
    final Grant server;
    /** The block's last token: the grant's own while nothing is reserved. */
    long last;
    /** Over a floor driver: no block reserved yet, and one may still be (before the first re-grant). */
    boolean unreserved;
    final Watch watch;
    /** The next token to lend. */
    long next;
    /** When the server's clock for the hold last started: the grant's poll or the last confirmed renewal. */
    long confirmedAtNanos;
    /** The grant lent now; null while parked. */
    LentGrant lent;
    /** While parked: when it is let go of. */
    Alarm linger;
    /** A contender of another client asked, or the cache is closing: never lent again. */
    boolean revoked;

    KeptHold(String name, Grant server, long last, long confirmedAtNanos, Watch watch) {
        this.name = name;
        this.server = server;
        this.last = last;
        this.next = server.fencingToken() + 1;
        this.confirmedAtNanos = confirmedAtNanos;
        this.watch = watch;
    }
}
