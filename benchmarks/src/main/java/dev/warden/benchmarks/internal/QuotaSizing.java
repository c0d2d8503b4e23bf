package dev.warden.benchmarks.internal;

import dev.warden.quota.HoldOutcome;
import dev.warden.quota.Outcome;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.internal.Scripts;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * What every kind of key the quota engine and its ledger keep in Redis costs, measured with
 * {@code MEMORY USAGE} on real keys the engine wrote (ids of typical length: a 16-character account id, a
 * UUID request or hold id): docs/quota.md's memory table. A journal entry and an expiry-index member are
 * measured as their key's usage divided by their number; a pending entry and a consumer as the growth of the
 * server's {@code used_memory}.
 */
public final class QuotaSizing {

    /** Bytes by kind, in the order of docs/quota.md's memory table. */
    public record Sizes(Map<String, Double> bytes) {

        public String markdown() {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "| key | bytes each (MEMORY USAGE) |%n|---|---:|%n"));
            bytes.forEach((kind, size) -> b.append(String.format(Locale.ROOT, "| %s | %.0f |%n", kind, size)));
            return b.toString();
        }
    }

    private static final int ACCOUNTS = 100;
    private static final int CHANGES = 10_000;

    private final RedisServer redis;

    public QuotaSizing(RedisServer redis) {
        this.redis = redis;
    }

    public Sizes measure() {
        String namespace = "sizing-" + Long.toHexString(System.nanoTime());
        KeyLayout layout = new KeyLayout(namespace, 8);
        Map<String, Double> sizes = new LinkedHashMap<>();
        try (QuotaService quota = QuotaService.create(Map.of("warden.quota.endpoint", redis.uri(),
                "warden.quota.namespace", namespace, "warden.quota.partitions", "8"))) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                String a = String.format(Locale.ROOT, "merchant-%07d", i);
                quota.open(a, 1L << 40);
                accounts.add(a);
            }
            List<String> records = new ArrayList<>();
            for (int i = 0; i < CHANGES; i++) {
                String a = accounts.get(i % accounts.size());
                String request = UUID.randomUUID().toString();
                Outcome o = quota.deduct(a, 1 + i % 500, request);
                if (!o.isApplied()) {
                    throw new IllegalStateException("sizing deduction refused: " + o);
                }
                if (i % 100 == 0) {
                    records.add(layout.requestKey(a, request));
                }
            }
            sizes.put("account (hash: balance, held, fence; 16-character id)", average(accounts.stream().map(layout::accountKey).toList()));
            sizes.put("idempotency record (36-character request id)", average(records));
            long entries = 0;
            long streams = 0;
            for (int p = 0; p < layout.partitions(); p++) {
                entries += Long.parseLong(String.valueOf(redis.command("XLEN", layout.journal(p))));
                streams += usage(layout.journal(p));
            }
            sizes.put("journal entry (per entry of " + CHANGES + ")", (double) streams / entries);
            sizes.put("partition marker", (double) usage(layout.marker(0)));

            // Named balances and postings.
            List<String> balances = new ArrayList<>();
            List<String> postings = new ArrayList<>();
            for (String a : accounts.subList(0, 20)) {
                quota.openBalance(a, "points");
                quota.openBalance(a, "coupons");
                String request = UUID.randomUUID().toString();
                PostingOutcome p = quota.post(a, request, Map.of("points", 1_000L, "coupons", 3L));
                if (!(p instanceof PostingOutcome.Posted)) {
                    throw new IllegalStateException("sizing posting refused: " + p);
                }
                balances.add(layout.balancesKey(a));
                postings.add(layout.postingKey(a, request));
            }
            sizes.put("named balances (hash of two: points, coupons)", average(balances));
            sizes.put("posting record (36-character request id, two lines)", average(postings));

            // Holds: open, ended, and each open hold's place in its partition's expiry index.
            List<String> open = new ArrayList<>();
            List<String> ended = new ArrayList<>();
            int opened = 0;
            for (String a : accounts.subList(20, 80)) {
                String hold = UUID.randomUUID().toString();
                if (!(quota.hold(a, 10, hold, Duration.ofHours(1)) instanceof HoldOutcome.Held)) {
                    throw new IllegalStateException("sizing hold refused");
                }
                if (open.size() < 30) {
                    open.add(layout.holdKey(a, hold));
                    opened++;
                } else {
                    quota.capture(a, hold, 5);
                    ended.add(layout.holdKey(a, hold));
                }
            }
            sizes.put("hold record, open (36-character hold id)", average(open));
            sizes.put("hold record, ended (kept for the retention)", average(ended));
            long index = 0;
            for (int p = 0; p < layout.partitions(); p++) {
                index += usage(layout.holdIndex(p));
            }
            sizes.put("open hold in its partition's expiry index (per hold)", (double) index / opened);

            // A split account: its buckets, a move taken and not yet given (pending), a give record.
            String hot = accounts.get(90);
            quota.split(hot, 8);
            List<String> buckets = new ArrayList<>();
            for (int i = 1; i < 8; i++) {
                buckets.add(layout.bucketKey(hot, i));
            }
            sizes.put("bucket of a split account (hash: balance, of)", average(buckets));
            String moveId = "mv-" + Long.toHexString(Long.MIN_VALUE | System.nanoTime()) + "-1";
            bucket(layout, "take", hot, 1, List.of(layout.journal(layout.bucketPartition(hot, 1)), layout.movesKey(hot, 1)),
                    "8", moveId, "0", "1", "1");
            sizes.put("pending move (hash of the moves taken from a bucket, one move)", (double) usage(layout.movesKey(hot, 1)));
            bucket(layout, "give", hot, 0, List.of(layout.journal(layout.bucketPartition(hot, 0)), layout.movedKey(hot, 0, moveId)),
                    moveId, "1");
            sizes.put("give record of a move (kept for the retention once the move is given)",
                    (double) usage(layout.movedKey(hot, 0, moveId)));
            quota.balance(hot); // completes the move

            // The ledger's group: a pending entry (read, not yet acknowledged) and a consumer. MEMORY USAGE estimates
            // a group's pending entries from samples (several times too high here), so these two are the growth of
            // the server's used_memory.
            String stream = layout.journal(0);
            redis.command("XGROUP", "CREATE", stream, "sizing", "0");
            long len = Long.parseLong(String.valueOf(redis.command("XLEN", stream)));
            long before = usedMemory();
            redis.command("XREADGROUP", "GROUP", "sizing", "host-4242", "COUNT", Long.toString(len), "STREAMS", stream, ">");
            long read = usedMemory();
            for (int i = 0; i < 1_000; i++) {
                redis.command("XGROUP", "CREATECONSUMER", stream, "sizing", "host" + i + "-" + (10_000 + i));
            }
            long consumers = usedMemory();
            sizes.put("pending entry of the ledger's group (read, not yet committed; per entry)", (double) (read - before) / len);
            sizes.put("consumer in the ledger's group (per consumer, per stream; name <host>-<pid>)", (double) (consumers - read) / 1_000);
            // The consumers' registry: a sorted set of names (<host>-<pid>) scored by heartbeat, as heartbeat.lua writes it.
            String registry = layout.ledgerKey("sizing:consumers");
            for (int i = 0; i < 10; i++) {
                redis.command("ZADD", registry, Long.toString(System.currentTimeMillis()), "ledger-host-" + i + "-" + (10_000 + i));
            }
            sizes.put("consumers' registry (sorted set; per consumer)", (double) usage(registry) / 10);
            return new Sizes(sizes);
        }
    }

    private void bucket(KeyLayout layout, String op, String account, int index, List<String> keys, String... args) {
        List<String> allKeys = new ArrayList<>(List.of(layout.marker(layout.bucketPartition(account, index)),
                layout.bucketKey(account, index)));
        allKeys.addAll(keys);
        List<String> allArgs = new ArrayList<>(List.of(op, account, Integer.toString(index), layout.markerValue()));
        allArgs.addAll(List.of(args));
        Object reply = redis.command(Scripts.eval(Scripts.Script.BUCKETS, allKeys, allArgs));
        if (!(reply instanceof List<?> list) || list.isEmpty() || !String.valueOf(list.get(0)).matches("taken|given")) {
            throw new IllegalStateException(op + " answered " + reply);
        }
    }

    private long usedMemory() {
        for (String line : String.valueOf(redis.command("INFO", "memory")).split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()).trim());
            }
        }
        throw new IllegalStateException("INFO memory without used_memory");
    }

    private double average(List<String> keys) {
        return keys.stream().mapToLong(this::usage).average().orElseThrow();
    }

    private long usage(String key) {
        return Long.parseLong(String.valueOf(redis.command("MEMORY", "USAGE", key, "SAMPLES", "0")));
    }
}
