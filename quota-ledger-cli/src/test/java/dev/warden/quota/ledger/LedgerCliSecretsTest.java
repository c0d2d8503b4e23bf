package dev.warden.quota.ledger;

import dev.warden.quota.ledger.cli.LedgerCli;
import dev.warden.testkit.CapturedOutput;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The ledger CLI echoes no password: not in its error line, not in a log line (issue 14). */
class LedgerCliSecretsTest {

    static final String SECRET = "S3cretPw-cli";
    /** Refused before anything connects. */
    static final String JDBC = "jdbc:postgresql://127.0.0.1:1/ledger?user=warden&password=" + SECRET;

    record Run(int code, String output) {
    }

    static Run run(String... args) {
        AtomicInteger code = new AtomicInteger();
        String output = CapturedOutput.of(() -> code.set(LedgerCli.run(args)));
        return new Run(code.get(), output);
    }

    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    @DisplayName("a password in --redis or --jdbc is refused (exit 2) and not echoed: the command line is public")
    void passwordOnTheCommandLine() {
        Run redis = run("reconcile", "--redis", "redis://u:" + SECRET + "@127.0.0.1:6379", "--jdbc", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(redis.code()).isEqualTo(2);
        assertThat(redis.output()).doesNotContain(SECRET).contains("--redis 'redis://***@127.0.0.1:6379' carries a password")
                .contains("WARDEN_QUOTA_REDIS__PASSWORD_FILE");
        Run jdbc = run("reconcile", "--redis", "redis://127.0.0.1:6379", "--jdbc", JDBC);
        assertThat(jdbc.code()).isEqualTo(2);
        assertThat(jdbc.output()).doesNotContain(SECRET).contains("WARDEN_JDBC_PASSWORD");
    }

    @Test
    @DisplayName("a configuration error in the settings file's endpoint exits 2 naming it without its password")
    void configurationError(@TempDir Path dir) throws IOException {
        Path settings = dir.resolve("quota.properties");
        Files.writeString(settings, "warden.quota.endpoint=redis://u:" + SECRET + "@127.0.0.1:notaport\n");
        Run r = run("reconcile", "--settings", settings.toString(), "--jdbc", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.output()).doesNotContain(SECRET).contains("redis://***@127.0.0.1:notaport");
    }

    @Test
    @DisplayName("a Redis that cannot be reached exits 3 naming the endpoint without its password (from a file)")
    void connectionFailure(@TempDir Path dir) throws IOException {
        int port = closedPort();
        Path password = dir.resolve("redis.password");
        Files.writeString(password, SECRET);
        Path settings = dir.resolve("quota.properties");
        Files.writeString(settings, "warden.quota.redis.username=u\nwarden.quota.redis.password-file=" + password + "\n");
        Run r = run("bootstrap", "--redis", "redis://127.0.0.1:" + port, "--redis-connect-timeout", "1s",
                "--settings", settings.toString(), "--jdbc", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.output()).doesNotContain(SECRET).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("a value picocli refuses is echoed redacted")
    void parameterError() {
        Run r = run("reconcile", "--redis-timeout", "redis://u:" + SECRET + "@h", "--jdbc", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.output()).doesNotContain(SECRET).contains("redis://***@h");
    }
}
