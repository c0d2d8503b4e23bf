package dev.warden.quota.ledger;

import dev.warden.testkit.CapturedOutput;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The ledger CLI echoes no password: not in its error line, not in a log line (issue 14). */
class LedgerCliSecretsTest {

    static final String SECRET = "S3cretPw-cli";
    /** Never connected to: the pool starts without a database and the Redis check fails first. */
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
    @DisplayName("a configuration error in --redis exits 2 naming the endpoint without its password")
    void configurationError() {
        Run r = run("reconcile", "--redis", "redis://u:" + SECRET + "@127.0.0.1:notaport", "--jdbc", JDBC);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.output()).doesNotContain(SECRET).contains("redis://***@127.0.0.1:notaport");
    }

    @Test
    @DisplayName("a Redis that cannot be reached exits 3 naming the endpoint without its password")
    void connectionFailure() throws IOException {
        int port = closedPort();
        Run r = run("bootstrap", "--redis", "redis://u:" + SECRET + "@127.0.0.1:" + port, "--redis-connect-timeout", "1s",
                "--jdbc", JDBC);
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.output()).doesNotContain(SECRET).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("a value picocli refuses is echoed redacted")
    void parameterError() {
        Run r = run("reconcile", "--redis-timeout", "redis://u:" + SECRET + "@h", "--jdbc", JDBC);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.output()).doesNotContain(SECRET).contains("redis://***@h");
    }
}
