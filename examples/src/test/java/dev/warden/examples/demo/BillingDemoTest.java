package dev.warden.examples.demo;

import dev.warden.examples.Captured;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The billing demo, in process, for a couple of seconds with each lock on the embedded defaults
 * (Redis and ZooKeeper launched by testkit, etcd from the local binary, an H2 file ledger): it
 * exits 0 and every invariant passes.
 */
class BillingDemoTest {

    @TempDir
    static Path demoDir;

    @BeforeAll
    static void demoDirectory() {
        System.setProperty("warden.demo.dir", demoDir.toString());
    }

    @AfterAll
    static void clear() {
        System.clearProperty("warden.demo.dir");
    }

    private static final String[] SHORT = {"--duration", "2s", "--merchants", "6", "--threads", "2",
            "--initial-quota", "200", "--progress", "lines"};

    @ParameterizedTest(name = "--lock {0}")
    @ValueSource(strings = {"none", "redis", "etcd", "zookeeper"})
    @DisplayName("a short run with each lock ends in a clean report: exit 0, every invariant PASS")
    void cleanRun(String lock) {
        Captured out = new Captured();
        Captured err = new Captured();
        String[] args = concat(new String[] {"--lock", lock}, SHORT);

        BillingDemo.Result result = BillingDemo.execute(args, out.stream, err.stream);

        assertThat(result.exitCode()).as("exit code; stderr:%n%s", err).isZero();
        Report report = result.report().orElseThrow();
        assertThat(report.lock()).isEqualTo(lock);
        assertThat(report.charges()).isPositive();
        assertThat(report.backlog()).isZero();
        assertThat(report.errors()).isEmpty();
        assertThat(report.invariants()).hasSize(6).allSatisfy(i ->
                assertThat(i.passed()).as("%s: %s", i.name(), i.detail()).isTrue());
        if (!lock.equals("none")) {
            // Under the merchant's lock nothing changes the balance between the read and the deduction.
            assertThat(report.stalePrices()).isZero();
        }
        String text = out.text();
        assertThat(text).contains("Charges by channel", "web", "mini-program", "openapi", "Outcomes", "Invariants",
                "PASS  no balance is negative", "PASS  ledger balance = Redis balance, for every merchant",
                "PASS  Σ acknowledged deductions = Σ ledger deductions = Σ (initial − final)",
                "PASS  no quarantined entries", "PASS  reconciliation finds no drift")
                .doesNotContain("FAIL");
        assertThat(demoDir.resolve("ledger.mv.db")).exists();
    }

    @Test
    @DisplayName("--jdbc-url puts the ledger in PostgreSQL; the demo creates its tables")
    void postgresLedger() {
        try (PostgresServer postgres = PostgresServer.start()) {
            Captured out = new Captured();
            Captured err = new Captured();
            String[] args = concat(new String[] {"--lock", "redis", "--jdbc-url", postgres.jdbcUrl()}, SHORT);

            BillingDemo.Result result = BillingDemo.execute(args, out.stream, err.stream);

            assertThat(result.exitCode()).as("exit code; stderr:%n%s", err).isZero();
            assertThat(result.report().orElseThrow().passed()).isTrue();
            assertThat(Long.parseLong(postgres.psql("SELECT COUNT(*) FROM ledger_entries WHERE kind = 'deduct'")))
                    .isPositive();
        }
    }

    @Test
    @DisplayName("--redis uses a running Redis instead of launching one")
    void givenRedis() {
        try (RedisServer redis = RedisServer.start()) {
            Captured out = new Captured();
            Captured err = new Captured();

            BillingDemo.Result result = BillingDemo.execute(new String[] {"--redis", redis.uri(), "--duration", "1s",
                    "--merchants", "3", "--progress", "off"}, out.stream, err.stream);

            assertThat(result.exitCode()).as("stderr:%n%s", err).isZero();
            assertThat(out.text()).contains(redis.uri() + " (--redis)").doesNotContain("embedded redis-server");
            assertThat(redis.command("DBSIZE")).isNotEqualTo(0L);
        }
    }

    @Test
    @DisplayName("a password shows in no line: refused on the command line, redacted from a settings file's endpoint,"
            + " whether malformed or unreachable")
    void noSecretShown(@TempDir Path dir) throws Exception {
        String secret = "S3cretPw-demo";
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Path malformed = dir.resolve("malformed.properties");
        Files.writeString(malformed, "warden.quota.endpoint=redis://u:" + secret + "@127.0.0.1:notaport\n");
        Path unreachable = dir.resolve("unreachable.properties");
        Files.writeString(unreachable, "warden.quota.endpoint=redis://u:" + secret + "@127.0.0.1:" + closed + "\n");
        String[][] runs = {{"--redis", "redis://u:" + secret + "@127.0.0.1:6379"},
                {"--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x?password=" + secret},
                {"--config", malformed.toString()}, {"--config", unreachable.toString()}};
        for (String[] given : runs) {
            Captured out = new Captured();
            Captured err = new Captured();
            BillingDemo.Result[] result = new BillingDemo.Result[1];
            String[] args = java.util.stream.Stream.concat(java.util.Arrays.stream(given),
                    java.util.stream.Stream.of("--duration", "1s", "--merchants", "1", "--progress", "off")).toArray(String[]::new);
            String logged = dev.warden.testkit.CapturedOutput.of(() -> result[0] = BillingDemo.execute(args, out.stream, err.stream));
            String what = String.join(" ", given);
            assertThat(result[0].exitCode()).as(what).isNotZero();
            assertThat(err.text()).as(what).contains("127.0.0.1:");
            assertThat(out.text() + err.text() + logged).as(what).doesNotContain(secret);
        }
    }

    @Test
    @DisplayName("usage errors exit 2 with a message, and start nothing")
    void usageErrors() {
        for (String[] args : new String[][] {{"--lock", "mutex"}, {"--hot-share", "1.5"}, {"--merchants", "0"},
                {"--duration", "soon"}, {"--redis", "localhost:6379"}, {"--config", "/no/such/file.properties"},
                {"--no-such-flag"}}) {
            Captured out = new Captured();
            Captured err = new Captured();
            BillingDemo.Result result = BillingDemo.execute(args, out.stream, err.stream);
            assertThat(result.exitCode()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(result.report()).isEmpty();
            assertThat(err.text()).as(String.join(" ", args)).startsWith("billing-demo: ");
            assertThat(out.text()).isEmpty();
        }
    }

    @Test
    @DisplayName("--help documents every flag and exits 0")
    void help() {
        Captured out = new Captured();
        Captured err = new Captured();

        assertThat(BillingDemo.execute(new String[] {"--help"}, out.stream, err.stream).exitCode()).isZero();

        CommandLine cli = new CommandLine(new BillingDemo());
        assertThat(cli.getCommandSpec().options()).hasSizeGreaterThan(12);
        for (OptionSpec option : cli.getCommandSpec().options()) {
            assertThat(out.text()).contains(option.longestName());
            assertThat(String.join(" ", option.description())).as(option.longestName()).isNotBlank();
        }
        assertThat(out.text()).contains("Exit codes:", "etcd-server");
    }

    @Test
    @DisplayName("a settings file chooses the lock; a flag overrides it")
    void settingsFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("billing.properties");
        Files.writeString(file, "warden.quota.lock=none\nwarden.quota.partitions=4\n");
        Captured out = new Captured();
        Captured err = new Captured();

        BillingDemo.Result fromFile = BillingDemo.execute(concat(new String[] {"--config", file.toString(),
                "--duration", "1s"}, new String[] {"--merchants", "3", "--progress", "off"}), out.stream, err.stream);
        BillingDemo.Result overridden = BillingDemo.execute(new String[] {"--config", file.toString(), "--lock", "redis",
                "--duration", "1s", "--merchants", "3", "--progress", "off"}, out.stream, err.stream);

        assertThat(fromFile.exitCode()).as("stderr:%n%s", err).isZero();
        assertThat(fromFile.report().orElseThrow().lock()).isEqualTo("none");
        assertThat(overridden.exitCode()).as("stderr:%n%s", err).isZero();
        assertThat(overridden.report().orElseThrow().lock()).isEqualTo("redis");
    }

    static String[] concat(String[] a, String[] b) {
        String[] all = new String[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
