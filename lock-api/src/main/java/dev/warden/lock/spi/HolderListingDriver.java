package dev.warden.lock.spi;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A driver that can list every holder of its namespace with bounded reads (a cursor scan or a prefix
 * range, never a command that blocks the server on the whole keyspace): what an operator's listing
 * reads. Every bundled driver is one; {@code LockAdmin.holders()} fails with {@code CONFIGURATION} on a
 * driver that is not.
 */
public interface HolderListingDriver extends HolderReadingDriver {

    /**
     * Every lock of the namespace held (on etcd and ZooKeeper: with anyone queued, its first contender)
     * as the server shows it while the listing runs: a lock taken or released meanwhile may or may not
     * be in it. Completes within {@code limit}.
     */
    CompletionStage<List<NamedHolder>> holders(java.time.Duration limit);

    /** A lock's name and its holder. */
    record NamedHolder(String name, Holder holder) {
    }
}
