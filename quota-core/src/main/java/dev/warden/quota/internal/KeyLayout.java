package dev.warden.quota.internal;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * Where an account's data lives. Partition {@code N} = CRC-32 of the account id's UTF-8 bytes
 * modulo the partition count: stable across JVMs and versions. Every key of one script call
 * carries the same hash tag <code>{p&lt;N&gt;}</code>, so the call touches one Redis Cluster slot.
 *
 * <pre>
 *   quota:{pN}:marker            partition marker, value "warden-quota partitions=&lt;count&gt;"
 *   quota:{pN}:acct:&lt;account&gt;    hash: balance, fence
 *   quota:{pN}:req:&lt;requestId&gt;   idempotency record (PX retention)
 *   quota:{pN}:journal           stream of applied changes
 * </pre>
 */
public final class KeyLayout {

    private final int partitions;

    public KeyLayout(int partitions) {
        if (partitions < 1 || partitions > 16384) {
            throw new IllegalArgumentException("partitions must be 1..16384, was " + partitions);
        }
        this.partitions = partitions;
    }

    public int partitions() {
        return partitions;
    }

    public int partition(String account) {
        CRC32 crc = new CRC32();
        crc.update(account.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % partitions);
    }

    /** The value of every partition's marker: a different partition count finds a mismatch. */
    public String markerValue() {
        return "warden-quota partitions=" + partitions;
    }

    public String base(int partition) {
        return "quota:{p" + partition + "}";
    }

    public String marker(int partition) {
        return base(partition) + ":marker";
    }

    public String journal(int partition) {
        return base(partition) + ":journal";
    }

    public String accountKey(String account) {
        return base(partition(account)) + ":acct:" + account;
    }

    public String markerOf(String account) {
        return marker(partition(account));
    }

    public String journalOf(String account) {
        return journal(partition(account));
    }

    public String requestKey(String account, String requestId) {
        return base(partition(account)) + ":req:" + requestId;
    }
}
