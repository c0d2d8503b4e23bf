package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Deduction;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * A quick figure, not a test: how fast the journal consumer moves a backlog into PostgreSQL
 * (entries/s), per batch size. Journals {@code entries} deductions first (consumer stopped), then
 * times a consumer from start to drained. Redis and PostgreSQL are testkit's local servers (PostgreSQL
 * with fsync off, synchronous_commit on).
 *
 * <pre>
 * mvn -q -pl quota-core dependency:build-classpath -Dmdep.outputFile=/tmp/quota-cp.txt -Dmdep.includeScope=test
 * java -cp quota-core/target/test-classes:quota-core/target/classes:$(cat /tmp/quota-cp.txt) \
 *     dev.warden.quota.ledger.LedgerThroughput [entries=50000] [batch sizes=50,200,1000]
 * </pre>
 */
public final class LedgerThroughput {

    private LedgerThroughput() {
    }

    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        String[] sizes = (args.length > 1 ? args[1] : "50,200,1000").split(",");
        try (RedisServer redis = RedisServer.start(); PostgresServer pg = PostgresServer.start()) {
            System.out.printf("%d cores; redis %s; %s%n", Runtime.getRuntime().availableProcessors(), redis.uri(), pg);
            for (String size : sizes) {
                run(redis, pg, entries, Integer.parseInt(size.trim()));
            }
        }
    }

    private static void run(RedisServer redis, PostgresServer pg, int entries, int batchSize) {
        redis.command("FLUSHALL");
        try (HikariDataSource ds = Support.freshPostgres(pg); QuotaService quota = Support.quota(redis)) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                String a = "bench-" + i;
                quota.open(a, 1L << 40);
                accounts.add(a);
            }
            for (int done = 0; done < entries; done += 500) {
                List<Deduction> batch = new ArrayList<>();
                for (int i = 0; i < 500; i++) {
                    batch.add(new Deduction(accounts.get((done + i) % accounts.size()), 1, UUID.randomUUID().toString()));
                }
                quota.deductAll(batch);
            }
            int total = entries + accounts.size();
            Map<String, Object> settings = Support.settings(redis);
            long start = System.nanoTime();
            java.util.concurrent.atomic.AtomicLong inBatches = new java.util.concurrent.atomic.AtomicLong();
            try (LedgerConsumer c = LedgerConsumer.builder(settings, ds).consumerName("bench").batchSize(batchSize)
                    .blockTime(Duration.ofMillis(100)).listener(new LedgerListener() {
                        @Override
                        public void batchCommitted(Batch batch) {
                            inBatches.addAndGet(batch.took().toNanos());
                        }
                    }).start()) {
                while (c.backlog() > 0) {
                    LockSupport.parkNanos(50_000_000);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("batch size %5d: %d entries in %.2f s = %,.0f entries/s (%d batches, %.2f s inside"
                                + " batches)%n", batchSize, total, seconds, total / seconds, c.stats().batches(),
                        inBatches.get() / 1e9);
            }
        }
    }
}
