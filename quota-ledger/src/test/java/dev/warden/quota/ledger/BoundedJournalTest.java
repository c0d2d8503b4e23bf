package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaService;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnector;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis memory stays bounded while the ledger keeps up: the consumer trims each journal below what
 * it has committed and acknowledged, never further, and idempotency records leave with their
 * retention.
 */
class BoundedJournalTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    /**
     * The stated bound, whatever the machine's speed: a journal holds what its consumer has not yet
     * acknowledged (entries pending or not yet delivered) and at most one batch more.
     */
    static final long BATCH = 100;
    /** A generous size of one journal entry in Redis, for the memory a growing backlog may take. */
    static final long BYTES_PER_BACKLOG_ENTRY = 1024;
    /** Load: deductions per second, over 200 accounts. */
    static final int RATE = 3_000;
    /** Retention of idempotency records in this test, so their memory reaches its steady state within the run. */
    static final Duration RETENTION = Duration.ofSeconds(2);
    /** The stated bound on growth of used_memory between the warm sample and the end of the run. */
    static final long MAX_GROWTH = 4L << 20;
    static HikariDataSource ds;
    static String schema;

    @BeforeAll
    static void schema() {
        ds = Support.freshPostgres(postgres.server());
        schema = Support.schemaOf(ds);
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    static String sql(String query) {
        return postgres.server().psql("SET search_path TO " + schema + "; " + query);
    }

    static long usedMemory(RedisServer server) {
        return Long.parseLong(RedisConnector.infoField(String.valueOf(server.command("INFO", "memory")), "used_memory"));
    }

    /** One partition's journal, read atomically: its length, and what its consumer group has not yet acknowledged. */
    record JournalState(long length, long pending, long lag) {
        long beyondBacklog() {
            return length - pending - lag;
        }
    }

    /** Each partition's journal state, or none for a partition whose group cannot say its lag yet. */
    static List<JournalState> journals(RedisServer server) {
        List<JournalState> states = new ArrayList<>();
        for (int p = 0; p < LAYOUT.partitions(); p++) {
            List<?> reply = (List<?>) server.command("EVAL", """
                    local length = redis.call('XLEN', KEYS[1])
                    if length == 0 then return {0, 0, 0} end
                    for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
                      local f = {}
                      for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
                      if f['name'] == ARGV[1] then
                        if not f['lag'] then return false end
                        return {length, f['pending'], f['lag']}
                      end
                    end
                    return {length, 0, length}""", "1", LAYOUT.journal(p), LedgerConsumer.DEFAULT_GROUP);
            if (reply != null) {
                states.add(new JournalState(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
                        ((Number) reply.get(2)).longValue()));
            }
        }
        return states;
    }

    /** Every entry id left in the journals, as "stream id". */
    static Set<String> journalIds(RedisServer server) {
        Set<String> ids = new HashSet<>();
        for (int p = 0; p < LAYOUT.partitions(); p++) {
            String start = "-";
            while (true) {
                List<?> page = (List<?>) server.command("XRANGE", LAYOUT.journal(p), start, "+", "COUNT", "5000");
                for (Object item : page) {
                    String id = (String) ((List<?>) item).get(0);
                    ids.add(LAYOUT.journal(p) + " " + id);
                    start = "(" + id;
                }
                if (page.size() < 5000) {
                    break;
                }
            }
        }
        return ids;
    }

    @Test
    @DisplayName("under sustained load with a consumer: journals stay below the bound, memory is flat once warm; killed mid-run, Redis keeps exactly what the database lacks (plus at most the batch in flight)")
    void boundedAndNeverTrimmedAhead() throws Exception {
        RedisServer server = redis.server();
        Map<String, Object> settings = Support.settings(server);
        settings.put("warden.quota.idempotency-retention", RETENTION.toMillis() + "ms");
        try (QuotaService quota = QuotaService.create(settings)) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                String a = "mem-" + UUID.randomUUID();
                quota.open(a, 1_000_000_000L);
                accounts.add(a);
            }
            long longest = 0;
            long beyond = 0;
            int sampled = 0;
            List<Long> memory = new ArrayList<>();
            List<Long> backlog = new ArrayList<>();
            ChildConsumer child = ChildConsumer.start("mem-" + UUID.randomUUID(), server.uri(), ds.getJdbcUrl());
            Support.await("the consumer took every partition", () -> child.count("TOOK") == LAYOUT.partitions());
            Load load = new Load(quota, accounts, 64, RATE);
            try {
                long started = System.nanoTime();
                // Warm-up: the JIT, the connection pool and the idempotency records reach their steady state.
                while (System.nanoTime() - started < Duration.ofSeconds(4).toNanos()) {
                    LockSupport.parkNanos(Duration.ofMillis(250).toNanos());
                }
                while (System.nanoTime() - started < Duration.ofSeconds(14).toNanos()) {
                    List<JournalState> states = journals(server);
                    sampled += states.size();
                    for (JournalState j : states) {
                        longest = Math.max(longest, j.length());
                        beyond = Math.max(beyond, j.beyondBacklog());
                    }
                    backlog.add(states.stream().mapToLong(j -> j.pending() + j.lag()).sum());
                    memory.add(usedMemory(server));
                    LockSupport.parkNanos(Duration.ofMillis(250).toNanos());
                }
                System.out.printf("longest journal %d entries, at most %d beyond its backlog; backlog %d .. %d; used_memory"
                        + " once warm %,d .. %,d bytes; %d deductions%n", longest, beyond, backlog.get(0),
                        backlog.get(backlog.size() - 1), memory.stream().mapToLong(Long::longValue).min().orElseThrow(),
                        memory.stream().mapToLong(Long::longValue).max().orElseThrow(), load.count());
                assertThat(sampled).as("journal samples whose group could say its lag").isPositive();
                assertThat(beyond).as("entries a journal keeps beyond what its consumer has not acknowledged")
                        .isLessThanOrEqualTo(BATCH);
                long warm = memory.get(0);
                long last = memory.get(memory.size() - 1);
                long backlogGrowth = Math.max(0, backlog.get(backlog.size() - 1) - backlog.get(0));
                assertThat(last - warm).as("used_memory growth after warm-up, beyond what the backlog's growth (%d entries)"
                        + " takes", backlogGrowth).isLessThanOrEqualTo(MAX_GROWTH + BYTES_PER_BACKLOG_ENTRY * backlogGrowth);

                // Kill the consumer mid-run; the load goes on a little, then stops.
                child.kill();
                LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
            } finally {
                load.close();
                child.close();
            }

            Set<String> inRedis = journalIds(server);
            Set<String> inDatabase = new HashSet<>(List.of(sql("SELECT stream || ' ' || entry_id FROM ledger_entries"
                    + " WHERE kind = 'deduct'").split("\n")));
            Set<String> acknowledged = new HashSet<>();
            load.entries.forEach((a, ids) -> ids.forEach(id -> acknowledged.add(LAYOUT.journalOf(a) + " " + id)));
            Set<String> notCommitted = new HashSet<>(acknowledged);
            notCommitted.removeAll(inDatabase);
            Set<String> committedNotTrimmed = new HashSet<>(inRedis);
            committedNotTrimmed.retainAll(inDatabase);
            Set<String> left = new HashSet<>(inRedis);
            left.removeAll(inDatabase);
            System.out.printf("after the kill: %d acknowledged, %d in the database, %d in Redis (%d of them committed)%n",
                    acknowledged.size(), inDatabase.size(), inRedis.size(), committedNotTrimmed.size());
            assertThat(left).as("Redis holds every acknowledged entry the database lacks, and nothing else").isEqualTo(notCommitted);
            Map<String, Integer> perStream = new HashMap<>();
            committedNotTrimmed.forEach(e -> perStream.merge(e.substring(0, e.indexOf(' ')), 1, Integer::sum));
            assertThat(perStream.values()).as("committed but not yet trimmed: at most the one batch (100) in flight per partition")
                    .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(100));

            // A new consumer finishes the work: the ledger is what callers were told, the journals end empty.
            try (LedgerConsumer heir = Support.consumer(server, ds, "heir-" + UUID.randomUUID()).start()) {
                Support.drained(heir);
            }
            long ledger = Long.parseLong(sql("SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE kind = 'deduct'"));
            assertThat(ledger).as("Σ ledger = Σ acknowledged").isEqualTo(load.total());
            assertThat(journalIds(server)).isEmpty();
        }
    }
}
