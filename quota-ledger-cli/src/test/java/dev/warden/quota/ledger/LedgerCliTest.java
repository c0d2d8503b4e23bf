package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.cli.LedgerCli;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The one-shot commands; {@code consume} runs as a child process in {@link ConsumerCrashTest}. */
class LedgerCliTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    static HikariDataSource ds;

    @BeforeAll
    static void schema() {
        ds = Support.freshPostgres(postgres.server());
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    record Run(int code, String out, String err) {
    }

    private static final String CONNECT_TIMEOUT = "warden.quota.connect-timeout";

    static synchronized Run run(String... args) {
        PrintStream original = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(errors, true, StandardCharsets.UTF_8));
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        // The lowest layer of the CLI's settings: --redis-connect-timeout and --settings still win over it.
        System.setProperty(CONNECT_TIMEOUT, "20s");
        try {
            int code = LedgerCli.run(args);
            return new Run(code, buffer.toString(StandardCharsets.UTF_8), errors.toString(StandardCharsets.UTF_8));
        } finally {
            System.clearProperty(CONNECT_TIMEOUT);
            System.setOut(original);
            System.setErr(originalErr);
        }
    }

    @Test
    @DisplayName("schema prints the SQL; reconcile exits 1 on drift, repair is a dry run without --apply; bootstrap is idempotent")
    void oneShots() {
        assertThat(run("schema", "--dialect", "H2").out()).contains("CREATE TABLE IF NOT EXISTS ledger_accounts");
        Run created = run("schema", "--migrate", "--jdbc", ds.getJdbcUrl());
        assertThat(created.code()).isZero();

        String jdbc = ds.getJdbcUrl();
        String uri = redis.server().uri();
        String a = "cli-" + UUID.randomUUID();
        try (QuotaService quota = Support.quota(redis.server());
             LedgerConsumer c = Support.consumer(redis.server(), ds, "cli").start()) {
            quota.open(a, 300);
            quota.deduct(a, 100, "d-" + a);
            Support.drained(c);
        }
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc).code()).isZero();
        redis.server().command("HSET", new dev.warden.quota.redis.KeyLayout(16).accountKey(a), "balance", "7");
        Run drift = run("reconcile", "--redis", uri, "--jdbc", jdbc);
        assertThat(drift.code()).isEqualTo(1);
        assertThat(drift.out()).contains(a + " (p").contains("redis 7, database 200").contains("difference -193");
        Run dry = run("reconcile", "--redis", uri, "--jdbc", jdbc, "--repair");
        assertThat(dry.out()).contains("would repair " + a + ": redis 7 -> 200 PLANNED");
        assertThat(redis.server().command("HGET", new dev.warden.quota.redis.KeyLayout(16).accountKey(a), "balance"))
                .isEqualTo("7");
        Run applied = run("reconcile", "--redis", uri, "--jdbc", jdbc, "--repair", "--apply");
        assertThat(applied.out()).contains("repair " + a + ": redis 7 -> 200 APPLIED");
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc).code()).isZero();
        Run boot = run("bootstrap", "--redis", uri, "--jdbc", jdbc);
        assertThat(boot.code()).isZero();
        assertThat(boot.out()).contains("0 accounts loaded");
        assertThat(run("quarantine", "--jdbc", jdbc).out()).contains("0 quarantined entries");
        assertThat(run("consume", "--redis", uri, "--jdbc", jdbc, "--batch-size", "0").code()).isEqualTo(2);
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc, "--redis-connect-timeout", "2s", "--redis-timeout", "1s")
                .code()).as("the Redis timeouts are options").isZero();
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc, "--redis-timeout", "0s").code())
                .as("a zero timeout is a configuration error").isEqualTo(2);
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc, "--redis-timeout", "1.5s").code())
                .as("the one grammar: no fractions").isEqualTo(2);
        System.setProperty("warden.quota.endpoint", uri);
        try {
            assertThat(run("reconcile", "--jdbc", jdbc).code()).as("the endpoint from -Dwarden.quota.endpoint").isZero();
        } finally {
            System.clearProperty("warden.quota.endpoint");
        }
    }

    @Test
    @DisplayName("`ledger settings` lists every quota, ledger and lock setting from the tables; consume's options are those settings")
    void settingsFromTheTables() {
        Run listed = run("settings");
        assertThat(listed.code()).isZero();
        for (dev.warden.lock.settings.SettingTable t : java.util.List.of(dev.warden.quota.redis.QuotaSettings.TABLE,
                LedgerSettings.TABLE, dev.warden.lock.settings.LockSettings.TABLE)) {
            for (dev.warden.lock.settings.Setting<?> s : t.settings()) {
                assertThat(listed.out()).contains(s.key() + (s.isSecret() ? ", " : "  [" + s.shownDefault() + "]"))
                        .contains("$" + dev.warden.lock.settings.SettingTable.environmentName(s.key()));
            }
        }
        Run help = run("consume", "--help");
        assertThat(help.out().replaceAll("\\s+", " ")).contains("warden.ledger.batch-size", "warden.ledger.partitions",
                "warden.ledger.group", "`ledger settings` lists every setting");
        Run bad = run("consume", "--redis", redis.server().uri(), "--jdbc", ds.getJdbcUrl(), "--sweep", "0s");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("warden.ledger.sweep-interval");
    }

    @Test
    @DisplayName("after Redis lost its data: reconcile exits 1, repair exits 4 naming bootstrap and writes nothing, bootstrap"
            + " then reconcile exit 0; nothing to resolve exits 1")
    void recoveryOrder() {
        String jdbc = ds.getJdbcUrl();
        String uri = redis.server().uri();
        assertThat(run("schema", "--migrate", "--jdbc", jdbc).code()).isZero();
        String a = "order-" + UUID.randomUUID();
        try (QuotaService quota = Support.quota(redis.server());
             LedgerConsumer c = Support.consumer(redis.server(), ds, "order").start()) {
            quota.open(a, 500);
            quota.deduct(a, 20, "d-" + a);
            Support.drained(c);
        }
        redis.server().command("FLUSHALL"); // Redis restarted without persistence
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc).code()).isEqualTo(1);
        Run refused = run("reconcile", "--redis", uri, "--jdbc", jdbc, "--repair", "--apply");
        assertThat(refused.code()).isEqualTo(4);
        assertThat(refused.err()).contains("repair refused, nothing was written").contains("run bootstrap first");
        assertThat(redis.server().command("EXISTS", new dev.warden.quota.redis.KeyLayout(16).accountKey(a))).isEqualTo(0L);
        assertThat(redis.server().command("EXISTS", new dev.warden.quota.redis.KeyLayout(16).markerOf(a))).isEqualTo(0L);
        assertThat(run("bootstrap", "--redis", uri, "--jdbc", jdbc).code()).isZero();
        assertThat(run("reconcile", "--redis", uri, "--jdbc", jdbc).code()).isZero();
        try (QuotaService quota = Support.quota(redis.server())) {
            assertThat(quota.balance(a)).hasValue(480);
        }
        assertThat(run("compensations", "--jdbc", jdbc).out()).contains("0 refused compensations");
        assertThat(run("quarantine", "--jdbc", jdbc, "--resolve", "no-such-stream", "0-1", "--note", "n/a").code()).isEqualTo(1);
    }
}
