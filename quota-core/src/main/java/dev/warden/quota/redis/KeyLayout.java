package dev.warden.quota.redis;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * Where an account's data lives. Partition {@code N} = CRC-32 of the account id's UTF-8 bytes
 * modulo the partition count: stable across JVMs and versions. Every key of one script call
 * carries the same hash tag <code>{p&lt;N&gt;}</code>, so the call touches one Redis Cluster slot.
 * A namespace, when set, prefixes every key ({@code <namespace>:quota:...}), so tenants sharing one
 * Redis never see each other's keys.
 *
 * <pre>
 *   quota:{pN}:marker                        partition marker, value "warden-quota partitions=&lt;count&gt;"
 *   quota:{pN}:acct:&lt;account&gt;                hash: balance, fence
 *   quota:{pN}:req:&lt;account&gt;:&lt;requestId&gt;    idempotency record (PX retention): request ids are unique per account
 *   quota:{pN}:journal                       stream of applied changes
 *   quota:{pN}:hold:&lt;account&gt;:&lt;holdId&gt;     a hold: state, amount, expiry (see holds.lua)
 *   quota:{pN}:holds                         sorted set of the partition's open holds by expiry
 *   quota:{pN}:bal:&lt;account&gt;                 hash: the account's named balances (see post.lua)
 *   quota:{pN}:post:&lt;account&gt;:&lt;requestId&gt;   what a posting wrote, for its retries (PX retention)
 * </pre>
 * A split account ({@link dev.warden.quota.QuotaService#split}) keeps bucket 0 in its account key (fields
 * {@code buckets}, {@code drain}) and bucket {@code i > 0} in partition {@code (N + i) mod partitions}:
 * <pre>
 *   quota:{pI}:bkt:&lt;account&gt;:&lt;i&gt;             hash: balance, of (the bucket count of its split, 0 when closed)
 *   quota:{pI}:req:&lt;account&gt;:&lt;requestId&gt;    a change routed to bucket i: its idempotency record
 *   quota:{pI}:moves:&lt;account&gt;               hash: moves taken from this bucket and not yet finished
 *   quota:{pI}:moved:&lt;account&gt;:&lt;moveId&gt;     a move given to this bucket: no lifetime until its source marks it
 *                                            given, then the retention
 * </pre>
 * Ids never contain {@code :}, <code>{</code> or <code>}</code>, so {@code <account>:<requestId>} is
 * unambiguous and no id can forge another partition's hash tag.
 */
public final class KeyLayout {

    private final String namespace;
    private final String prefix;
    private final int partitions;

    /** Without a namespace: the keys start with {@code quota:}. */
    public KeyLayout(int partitions) {
        this("", partitions);
    }

    /**
     * @param namespace empty, or what {@link QuotaConfig} accepts: letters, digits, {@code . _ - :}
     */
    public KeyLayout(String namespace, int partitions) {
        if (partitions < 1 || partitions > 16384) {
            throw new IllegalArgumentException("partitions must be 1..16384, was " + partitions);
        }
        String problem = QuotaConfig.namespaceProblem(namespace);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        this.namespace = namespace;
        this.prefix = namespace.isEmpty() ? "" : namespace + ":";
        this.partitions = partitions;
    }

    public int partitions() {
        return partitions;
    }

    /** The namespace, empty when none. */
    public String namespace() {
        return namespace;
    }

    /** What every key starts with: {@code <namespace>:}, or nothing. */
    public String prefix() {
        return prefix;
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
        return prefix + "quota:{p" + partition + "}";
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
        return base(partition(account)) + ":req:" + account + ":" + requestId;
    }

    /** An authorisation hold of an account: hold ids are unique per account, like request ids. */
    public String holdKey(String account, String holdId) {
        return base(partition(account)) + ":hold:" + account + ":" + holdId;
    }

    /** An account's named balances: a hash, one field per balance ({@link dev.warden.quota.QuotaService#post}). */
    public String balancesKey(String account) {
        return base(partition(account)) + ":bal:" + account;
    }

    /** What a posting wrote, for its retries (next to its idempotency record, with the same retention). */
    public String postingKey(String account, String requestId) {
        return base(partition(account)) + ":post:" + account + ":" + requestId;
    }

    /** The partition of bucket {@code index} of a split account: its own partition for bucket 0, then the next ones. */
    public int bucketPartition(String account, int index) {
        return (partition(account) + index) % partitions;
    }

    /** Bucket {@code index} of a split account: the account key itself for bucket 0. */
    public String bucketKey(String account, int index) {
        return index == 0 ? accountKey(account)
                : base(bucketPartition(account, index)) + ":bkt:" + account + ":" + index;
    }

    /** The idempotency record of a change routed to bucket {@code index}. */
    public String bucketRequestKey(String account, int index, String requestId) {
        return base(bucketPartition(account, index)) + ":req:" + account + ":" + requestId;
    }

    /** The moves taken from bucket {@code index} and not yet finished. */
    public String movesKey(String account, int index) {
        return base(bucketPartition(account, index)) + ":moves:" + account;
    }

    /** The record of a move given to bucket {@code index}. */
    public String movedKey(String account, int index, String moveId) {
        return base(bucketPartition(account, index)) + ":moved:" + account + ":" + moveId;
    }

    /** The partition's open holds, scored by expiry (ms). */
    public String holdIndex(int partition) {
        return base(partition) + ":holds";
    }

    /** A {@code SCAN MATCH} pattern for every account key of this namespace (and no other's). */
    public String accountPattern() {
        return globEscaped(prefix) + "quota:{p*}:acct:*";
    }

    /** The account an account key names, or null when it is not one of this layout's account keys. */
    public String accountOf(String key) {
        int at = key.indexOf("}:acct:");
        if (at < 0 || !key.startsWith(prefix + "quota:{p")) {
            return null;
        }
        String account = key.substring(at + "}:acct:".length());
        return !account.isEmpty() && Ids.problem(account) == null && key.equals(accountKey(account)) ? account : null;
    }

    /** A key of the ledger's own (not partitioned), e.g. its consumers' registry. */
    public String ledgerKey(String name) {
        return prefix + "quota:ledger:" + name;
    }

    private static String globEscaped(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }
}
