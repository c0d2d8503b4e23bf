package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaService;
import dev.warden.quota.redis.KeyLayout;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ledger consumers in processes of their own share the partitions through their locks; one dies with
 * SIGKILL, one is frozen with SIGSTOP past its lease at the point where only the database's fence can
 * stop its batch. Through all of it no entry is lost and none is applied twice: every account's
 * ledger balance is its initial quota minus what its callers were told was applied.
 */
class ConsumerProcessesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static final long INITIAL = 1_000_000_000L;
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

    static RedisServer server() {
        return redis.server();
    }

    /** Owner of each partition as the database records it (the last to claim it or write a batch). */
    static Map<Integer, String> owners() {
        Map<Integer, String> owners = new HashMap<>();
        String rows = sql("SELECT stream || '=' || owner FROM ledger_partitions");
        for (String line : rows.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int eq = line.indexOf('=');
            String stream = line.substring(0, eq);
            for (int p = 0; p < LAYOUT.partitions(); p++) {
                if (LAYOUT.journal(p).equals(stream)) {
                    owners.put(p, line.substring(eq + 1));
                }
            }
        }
        return owners;
    }

    static List<String> open(QuotaService quota, int n) {
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String a = "proc-" + UUID.randomUUID();
            quota.open(a, INITIAL);
            accounts.add(a);
        }
        return accounts;
    }

    /** Every acknowledged deduction is in the ledger once, and nothing else is. */
    static void assertLedgerIsWhatCallersWereTold(QuotaService quota, Load load) {
        Support.await(Duration.ofSeconds(90), "every journal entry reached the database",
                () -> Support.backlog(server(), LAYOUT) == 0);
        Map<String, long[]> ledger = new HashMap<>(); // account -> {balance, deductions}
        for (String line : sql("SELECT a.account || '=' || a.balance || '=' || (SELECT COUNT(*) FROM ledger_entries e"
                + " WHERE e.account = a.account AND e.kind = 'deduct') FROM ledger_accounts a WHERE a.account LIKE 'proc-%'")
                .split("\n")) {
            String[] f = line.split("=");
            ledger.put(f[0], new long[]{Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        long ledgerSum = 0;
        for (Map.Entry<String, java.util.concurrent.atomic.AtomicLong> e : load.acknowledged.entrySet()) {
            String a = e.getKey();
            long expected = INITIAL - e.getValue().get();
            assertThat(ledger.get(a)[0]).as(a).isEqualTo(expected);
            assertThat(quota.balance(a)).hasValue(expected);
            assertThat(ledger.get(a)[1]).as("deductions of " + a).isEqualTo(load.acknowledgedCount.get(a).get());
            ledgerSum += INITIAL - ledger.get(a)[0];
        }
        assertThat(ledgerSum).as("Σ ledger = Σ acknowledged").isEqualTo(load.total());
        assertThat(sql("SELECT COUNT(*) FROM ledger_quarantine")).isEqualTo("0");
        assertThat(sql("SELECT COUNT(*) FROM ledger_compensations")).isEqualTo("0");
    }

    @Test
    @DisplayName("four consumer processes; one frozen with SIGSTOP past its lease has its batch refused by the fence, another is killed: nothing lost, nothing doubled")
    void fourProcessesOneFrozenOneKilled() throws Exception {
        try (QuotaService quota = Support.quota(server())) {
            List<String> accounts = open(quota, 200);
            List<ChildConsumer> children = new ArrayList<>();
            try (Load load = new Load(quota, accounts, 64, 2_000)) {
                for (int i = 0; i < 4; i++) {
                    children.add(ChildConsumer.start("c" + i + "-" + UUID.randomUUID(), server().uri(), ds.getJdbcUrl()));
                }
                Support.await("four consumers own 4 partitions each", () -> {
                    Map<Integer, String> o = owners();
                    return o.size() == 16 && children.stream().allMatch(c -> o.values().stream().filter(c.name::equals).count() == 4);
                });
                ChildConsumer frozen = children.get(0);
                ChildConsumer killed = children.get(1);
                long batchesBefore = frozen.count("BATCH");
                Support.await("the consumer to freeze is writing", () -> frozen.count("BATCH") > batchesBefore);

                frozen.freezeAtNextBatch();
                Set<Integer> frozenOwned = new HashSet<>();
                owners().forEach((p, o) -> {
                    if (o.equals(frozen.name)) {
                        frozenOwned.add(p);
                    }
                });
                assertThat(frozenOwned).isNotEmpty();
                String sessionsAtFreeze = sql("SELECT pid, state, now() - xact_start, now() - state_change, left(query, 100)"
                        + " FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY pid");
                Support.await("the others took the frozen consumer's partitions after its leases expired", () -> {
                    Map<Integer, String> o = owners();
                    return frozenOwned.stream().noneMatch(p -> frozen.name.equals(o.get(p)));
                });
                frozen.resume();
                try {
                    Support.await("the resumed consumer's batch was refused by the database (log " + frozen.log + ")",
                            () -> frozen.saw("FENCED"));
                } catch (AssertionError e) {
                    // Keep what the child said, the claims and the sessions: its directory is gone afterwards. (Seen when the
                    // child stopped itself: it ran on past the fence before the stop landed; the test stops it now.)
                    List<String> lines = java.nio.file.Files.readAllLines(frozen.log);
                    int from = Math.max(0, lines.lastIndexOf("FREEZING"));
                    StringBuilder took = new StringBuilder();
                    for (ChildConsumer c : children) {
                        c.lines().stream().filter(l -> l.startsWith("TOOK ") || l.startsWith("LOST ") || l.startsWith("FENCED "))
                                .forEach(l -> took.append(c.name, 0, 2).append(' ').append(l).append('\n'));
                    }
                    throw new AssertionError(e.getMessage() + "; frozen owned " + frozenOwned + "; the child said, from FREEZING"
                            + " on (at most 30 lines):\n" + String.join("\n", lines.subList(from, Math.min(lines.size(), from + 30)))
                            + "\nDB now:\n" + sql("SELECT stream, token, owner, updated_at, claimed_at FROM ledger_partitions ORDER BY stream")
                            + "\nclaims:\n" + took + "\nsessions at the freeze:\n" + sessionsAtFreeze, e);
                }
                assertThat(frozen.saw("RESUMED")).isTrue();

                killed.kill();
                Support.await("the killed consumer's partitions were taken over", () -> {
                    Map<Integer, String> o = owners();
                    return o.values().stream().noneMatch(killed.name::equals);
                });
                ChildConsumer survivor = children.get(2);
                long batches = survivor.count("BATCH");
                Support.await("the survivors keep writing", () -> survivor.count("BATCH") > batches + 5);
                load.close();
                assertLedgerIsWhatCallersWereTold(quota, load);
            } finally {
                for (ChildConsumer c : children) {
                    c.close();
                }
            }
        }
    }

    @Test
    @DisplayName("a consumer frozen inside its batch's transaction, holding the partition's row, loses its session;"
            + " the new owner takes every partition and drains it meanwhile, and the resumed consumer writes nothing")
    void frozenInsideTransaction() throws Exception {
        try (QuotaService quota = Support.quota(server())) {
            List<String> accounts = open(quota, 50);
            try (Load load = new Load(quota, accounts, 8, 500);
                 ChildConsumer frozen = ChildConsumer.start("frozen-" + UUID.randomUUID(), server().uri(), ds.getJdbcUrl())) {
                Support.await("one consumer owns every partition", () -> {
                    Map<Integer, String> o = owners();
                    return o.size() == 16 && o.values().stream().allMatch(frozen.name::equals);
                });
                frozen.freezeInsideNextBatch();
                Support.await("the consumer froze inside a batch (log " + frozen.log + ")",
                        () -> frozen.saw("FREEZING-IN-TRANSACTION"));
                try (LedgerConsumer next = Support.consumer(server(), ds, "next-" + UUID.randomUUID()).start()) {
                    // Within its lease (2 s), the idle-in-transaction limit (the request timeout, 3 s) and a few
                    // rebalances; before that limit existed the frozen row blocked one partition for good.
                    Support.await(Duration.ofSeconds(30), "the new consumer owns every partition while the other is frozen",
                            () -> {
                                Map<Integer, String> o = owners();
                                return o.size() == 16 && o.values().stream().allMatch(next.consumerName()::equals);
                            });
                    Support.await(Duration.ofSeconds(30), "the journal drains while the other is frozen",
                            () -> next.backlog() < 100);
                    frozen.resume();
                    // Its session is gone, so its batch was never committed; it finds its leases lost (or, had it
                    // written again, the fence refuses it) and lets the partitions go.
                    Support.await("the resumed consumer let its partitions go (log " + frozen.log + ")",
                            () -> frozen.saw("LOST") || frozen.saw("FENCED"));
                    load.close();
                    assertLedgerIsWhatCallersWereTold(quota, load);
                }
            }
        }
    }
}
