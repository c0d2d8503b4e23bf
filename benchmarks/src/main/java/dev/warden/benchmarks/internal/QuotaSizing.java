package dev.warden.benchmarks.internal;

import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.spi.KeyLayout;
import dev.warden.testkit.RedisServer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * What the quota engine's keys cost in Redis memory, measured with {@code MEMORY USAGE} on real keys
 * the engine wrote: an account (hash: balance, fence), an idempotency record, and a journal entry (a
 * stream's usage divided by its entries). Ids of typical length: a 16-character account id and a
 * UUID request id.
 */
public final class QuotaSizing {

    /** The figures, in bytes. */
    public record Sizes(double account, double idempotencyRecord, double journalEntry) {

        public String markdown() {
            return String.format(Locale.ROOT, "| key | bytes each (MEMORY USAGE) |%n|---|---:|%n"
                    + "| account (hash: balance, fence; 16-character id) | %.0f |%n"
                    + "| idempotency record (36-character request id) | %.0f |%n"
                    + "| journal entry (stream of 10,000 deductions, per entry) | %.0f |%n", account, idempotencyRecord,
                    journalEntry);
        }
    }

    private final RedisServer redis;

    public QuotaSizing(RedisServer redis) {
        this.redis = redis;
    }

    public Sizes measure() {
        String namespace = "sizing-" + Long.toHexString(System.nanoTime());
        KeyLayout layout = new KeyLayout(namespace, 1); // one partition: one journal holds every entry
        try (QuotaService quota = QuotaService.create(Map.of("warden.quota.endpoint", redis.uri(),
                "warden.quota.namespace", namespace, "warden.quota.partitions", "1"))) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String a = String.format(Locale.ROOT, "merchant-%07d", i);
                quota.open(a, 1L << 40);
                accounts.add(a);
            }
            List<String> records = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
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
            double account = accounts.stream().mapToLong(a -> usage(layout.accountKey(a))).average().orElseThrow();
            double record = records.stream().mapToLong(this::usage).average().orElseThrow();
            long entries = Long.parseLong(String.valueOf(redis.command("XLEN", layout.journal(0))));
            double entry = (double) usage(layout.journal(0)) / entries;
            return new Sizes(account, record, entry);
        }
    }

    private long usage(String key) {
        return Long.parseLong(String.valueOf(redis.command("MEMORY", "USAGE", key, "SAMPLES", "0")));
    }
}
