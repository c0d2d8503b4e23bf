package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warden.testkit.PostgresServer.PsqlException;
import dev.warden.testkit.internal.PostgresBinaries;
import dev.warden.testkit.internal.PostgresExec;
import dev.warden.testkit.internal.Wait;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PostgresServerTest {

    private static final Duration SHORT = Duration.ofSeconds(2);
    private static final Duration PATIENT = Duration.ofSeconds(15);

    /** One server for the cases that only read it or add their own table; the rest start their own. */
    private static PostgresServer shared;

    @BeforeAll
    static void startShared() {
        shared = PostgresServer.start();
    }

    @AfterAll
    static void stopShared() {
        if (shared != null) {
            shared.close();
        }
    }

    @Test
    @DisplayName("launches a local server on a loopback port that answers select 1")
    void startsAndAnswersSelect1() {
        PostgresServer postgres = shared;
        assertThat(postgres.isRunning()).isTrue();
        assertThat(postgres.host()).isEqualTo("127.0.0.1");
        assertThat(postgres.database()).isEqualTo("warden");
        assertThat(postgres.user()).isEqualTo("warden");
        assertThat(postgres.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:" + postgres.port() + "/warden?user=warden");
        assertThat(postgres.psql("select 1")).isEqualTo("1");
        assertThat(postgres.psql("select current_database(), current_user, pg_encoding_to_char(encoding)"
                + " from pg_database where datname = current_database()")).isEqualTo("warden|warden|UTF8");
    }

    @Test
    @DisplayName("host, port, user and database work with the psql binary directly")
    void rawPsqlBinaryConnects() throws Exception {
        PostgresServer postgres = shared;
        assertThat(rawPsql(postgres, Map.of(), "select 40 + 2")).isEqualTo(new RawResult(0, "42"));
    }

    @Test
    @DisplayName("a table created through psql reads back, rows and non-ASCII text included")
    void createTableAndReadBack() {
        PostgresServer postgres = shared;
        assertThat(postgres.psql("create table account (id int primary key, name text not null,"
                + " remaining bigint check (remaining >= 0))")).isEmpty();
        assertThat(postgres.psql("insert into account values (1, 'alice', 10), (2, 'välue', 0)")).isEmpty();
        assertThat(postgres.psql("select id, name, remaining from account order by id"))
                .isEqualTo("1|alice|10\n2|välue|0");
        assertThatThrownBy(() -> postgres.psql("update account set remaining = -1 where id = 2"))
                .isInstanceOfSatisfying(PsqlException.class, e -> {
                    assertThat(e.exitCode()).isEqualTo(1);
                    assertThat(e.timedOut()).isFalse();
                    assertThat(e.stderr()).contains("violates check constraint");
                });
    }

    @Test
    @DisplayName("psql errors throw with psql's standard error")
    void psqlErrorsThrow() {
        PostgresServer postgres = shared;
        assertThatThrownBy(() -> postgres.psql("select * from no_such_table"))
                .isInstanceOf(PsqlException.class)
                .hasMessageContaining("relation \"no_such_table\" does not exist");
        assertThat(postgres.psql("select 'still fine'")).isEqualTo("still fine");
    }

    @Test
    @DisplayName("defaults: fsync and full_page_writes off, synchronous_commit on")
    void defaultSettings() {
        PostgresServer postgres = shared;
        assertThat(postgres.psql("show fsync")).isEqualTo("off");
        assertThat(postgres.psql("show full_page_writes")).isEqualTo("off");
        assertThat(postgres.psql("show synchronous_commit")).isEqualTo("on");
    }

    @Test
    @DisplayName("builder settings reach the server and override the defaults")
    void builderSettingsApply() {
        try (PostgresServer postgres = PostgresServer.builder()
                .setting("max_connections", "20")
                .setting("synchronous_commit", "off")
                .start()) {
            assertThat(postgres.psql("show max_connections")).isEqualTo("20");
            assertThat(postgres.psql("show synchronous_commit")).isEqualTo("off");
        }
    }

    @Test
    @DisplayName("builder refuses settings testkit owns")
    void builderRefusesReservedSettings() {
        assertThatThrownBy(() -> PostgresServer.builder().setting("port", "5432"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> PostgresServer.builder().setting("listen_addresses", "*"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("a server that cannot start fails with the tail of its log")
    void failedStartShowsLogTail() {
        assertThatThrownBy(() -> PostgresServer.builder().setting("no_such_setting", "1").start())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("log tail")
                .hasMessageContaining("unrecognized configuration parameter \"no_such_setting\"");
    }

    @Test
    @DisplayName("stop ends open sessions and keeps the data; restart serves it on the same port")
    void stopAndRestartKeepData() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            int port = postgres.port();
            postgres.psql("create table t (x int); insert into t values (1), (2)");
            try (Session session = Session.open(postgres)) {
                session.send("select 'open';");
                assertThat(session.nextLine(PATIENT)).isEqualTo("open");

                postgres.stop();

                assertThat(postgres.isRunning()).isFalse();
                assertThat(refusesConnections(port)).isTrue();
                assertThatThrownBy(() -> postgres.psql(SHORT, "select 1"))
                        .isInstanceOfSatisfying(PsqlException.class, e -> assertThat(e.timedOut()).isFalse());
                postgres.stop(); // idempotent
            }

            postgres.restart();
            assertThat(postgres.isRunning()).isTrue();
            assertThat(postgres.port()).isEqualTo(port);
            assertThat(postgres.psql("select sum(x) from t")).isEqualTo("3");
        }
    }

    @Test
    @DisplayName("restart on a running server keeps port and data")
    void restartWhileRunning() {
        try (PostgresServer postgres = PostgresServer.start()) {
            int port = postgres.port();
            String startedAt = postgres.psql("select pg_postmaster_start_time()");
            postgres.psql("create table t (x int); insert into t values (7)");

            postgres.restart();

            assertThat(postgres.port()).isEqualTo(port);
            assertThat(postgres.psql("select pg_postmaster_start_time()")).isNotEqualTo(startedAt);
            assertThat(postgres.psql("select x from t")).isEqualTo("7");
        }
    }

    @Test
    @DisplayName("kill -9 takes down the postmaster and its backends; restart recovers committed data only")
    void killAndRecover() throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            int port = postgres.port();
            postgres.psql("create table t (x int primary key)");
            try (Session session = Session.open(postgres)) {
                session.send("select pg_backend_pid();");
                long backend = Long.parseLong(session.nextLine(PATIENT));
                session.send("begin; insert into t values (99); select 'uncommitted';");
                assertThat(session.nextLine(PATIENT)).isEqualTo("uncommitted");
                // Acknowledged immediately before the crash: must survive it.
                postgres.psql("insert into t values (1)");

                postgres.kill();

                assertThat(postgres.isRunning()).isFalse();
                assertThat(ProcessHandle.of(backend).map(PostgresExec::isGone).orElse(true))
                        .as("backend %d gone", backend).isTrue();
                assertThat(refusesConnections(port)).isTrue();
            }

            postgres.restart();

            assertThat(postgres.isRunning()).isTrue();
            assertThat(postgres.port()).isEqualTo(port);
            assertThat(postgres.psql("select array_agg(x order by x) from t")).isEqualTo("{1}");
            postgres.psql("insert into t values (2)");
            assertThat(postgres.psql("select count(*) from t")).isEqualTo("2");
        }
    }

    @Test
    @DisplayName("pause freezes the postmaster and existing backends; resume serves what queued up")
    void pauseAndResume() throws Exception {
        try (PostgresServer postgres = PostgresServer.start(); Session session = Session.open(postgres)) {
            session.send("select pg_backend_pid();");
            long backend = Long.parseLong(session.nextLine(PATIENT));

            postgres.pause();

            assertThat(postgres.isPaused()).isTrue();
            assertThat(postgres.isRunning()).isTrue();
            assertThat(Wait.until(PATIENT, () -> PostgresExec.state(backend) == 'T'))
                    .as("backend %d stopped", backend).isTrue();
            session.send("select 'queued';");
            assertThatThrownBy(() -> postgres.psql(SHORT, "select 1")).isInstanceOf(PsqlException.class);
            RawResult raw = rawPsql(postgres, Map.of("PGCONNECT_TIMEOUT", "1"), "select 1");
            assertThat(raw.exitCode()).isNotZero();
            assertThat(session.pollLine()).as("the open session answered while paused").isNull();

            postgres.resume();

            assertThat(postgres.isPaused()).isFalse();
            assertThat(session.nextLine(PATIENT)).isEqualTo("queued");
            assertThat(postgres.psql("select 1")).isEqualTo("1");
        }
    }

    @Test
    @DisplayName("kill while paused still kills, and restart recovers")
    void killWhilePaused() {
        try (PostgresServer postgres = PostgresServer.start()) {
            postgres.psql("create table t (x int); insert into t values (5)");
            postgres.pause();
            postgres.kill();
            assertThat(postgres.isRunning()).isFalse();
            assertThat(postgres.isPaused()).isFalse();
            postgres.restart();
            assertThat(postgres.psql("select x from t")).isEqualTo("5");
        }
    }

    @Test
    @DisplayName("stop on a paused server resumes it and shuts it down")
    void stopWhilePaused() {
        try (PostgresServer postgres = PostgresServer.start()) {
            postgres.pause();
            postgres.stop();
            assertThat(postgres.isRunning()).isFalse();
            assertThat(postgres.isPaused()).isFalse();
            postgres.restart();
            assertThat(postgres.psql("select 1")).isEqualTo("1");
        }
    }

    @Test
    @DisplayName("close on a paused server frees the port; the server is then unusable")
    void closeWhilePaused() {
        PostgresServer postgres = PostgresServer.start();
        int port = postgres.port();
        postgres.pause();
        postgres.close();
        assertThat(postgres.isRunning()).isFalse();
        assertThat(refusesConnections(port)).isTrue();
        assertThatThrownBy(postgres::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        postgres.close();
    }

    @Nested
    @DisplayName("resolution from the environment")
    class Environment {

        @Test
        @DisplayName("WARDEN_PG_URL is used as is and refuses fault injection")
        void externalUrl() {
            try (PostgresServer launched = PostgresServer.start()) {
                Map<String, String> env = Map.of("WARDEN_PG_URL", launched.jdbcUrl(), "PATH", System.getenv("PATH"));
                PostgresServer external = PostgresServer.builder().setting("fsync", "off").environment(env::get).start();

                assertThat(external.host()).isEqualTo("127.0.0.1");
                assertThat(external.port()).isEqualTo(launched.port());
                assertThat(external.database()).isEqualTo("warden");
                assertThat(external.user()).isEqualTo("warden");
                assertThat(external.jdbcUrl()).isEqualTo(launched.jdbcUrl());
                assertThat(external.isRunning()).isTrue();
                external.psql("create table seen_from_outside (x int)");
                assertThat(launched.psql("select count(*) from seen_from_outside")).isEqualTo("0");
                for (Runnable fault : List.<Runnable>of(external::pause, external::resume, external::kill,
                        external::stop, external::restart)) {
                    assertThatThrownBy(fault::run)
                            .isInstanceOf(UnsupportedOperationException.class)
                            .hasMessageContaining("WARDEN_PG_URL");
                }

                external.close();
                assertThat(launched.psql("select 1")).isEqualTo("1");
            }
        }

        @Test
        @DisplayName("WARDEN_PG_URL with a setting the server does not have fails loudly")
        void externalUrlSettingMismatch() {
            try (PostgresServer launched = PostgresServer.start()) {
                Map<String, String> env = Map.of("WARDEN_PG_URL", launched.jdbcUrl(), "PATH", System.getenv("PATH"));
                assertThatThrownBy(() -> PostgresServer.builder().setting("fsync", "on").environment(env::get).start())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("fsync=off");
            }
        }

        @Test
        @DisplayName("WARDEN_PG_URL that is malformed or does not answer fails loudly")
        void badExternalUrl() {
            Map<String, String> malformed = Map.of("WARDEN_PG_URL", "postgres://127.0.0.1/db");
            assertThatThrownBy(() -> PostgresServer.builder().environment(malformed::get).start())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("jdbc:postgresql://");
            Map<String, String> noUser = Map.of("WARDEN_PG_URL", "jdbc:postgresql://127.0.0.1:5432/db");
            assertThatThrownBy(() -> PostgresServer.builder().environment(noUser::get).start())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("user");

            int closedPort = closedPort();
            Map<String, String> nobody = Map.of("WARDEN_PG_URL",
                    "jdbc:postgresql://127.0.0.1:" + closedPort + "/db?user=u&password=secret",
                    "PATH", System.getenv("PATH"));
            assertThatThrownBy(() -> PostgresServer.builder().environment(nobody::get).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("does not answer select 1")
                    .hasMessageContaining("password=***")
                    .hasMessageNotContaining("secret");
        }

        @Test
        @DisplayName("as root the server runs as OS user postgres (or WARDEN_PG_OS_USER); otherwise as the JVM's user")
        void serverOsUser() throws IOException {
            boolean root = "root".equals(System.getProperty("user.name"));
            try (PostgresServer postgres = PostgresServer.start()) {
                Path data = Path.of(postgres.psql("select current_setting('data_directory')"));
                assertThat(Files.getOwner(data).getName()).isEqualTo(root ? "postgres" : System.getProperty("user.name"));
            }
            Map<String, String> env = Map.of("WARDEN_PG_OS_USER", "warden-no-such-user", "PATH", System.getenv("PATH"));
            if (root) {
                assertThatThrownBy(() -> PostgresServer.builder().environment(env::get).start())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("'warden-no-such-user', which does not exist");
            } else {
                try (PostgresServer postgres = PostgresServer.builder().environment(env::get).start()) {
                    assertThat(postgres.psql("select 1")).isEqualTo("1");
                }
            }
        }

        @Test
        @DisplayName("WARDEN_PG_BIN names the binary directory")
        void explicitBinaryDirectory() {
            Path bin = PostgresBinaries.serverDirectory(System::getenv);
            Map<String, String> env = Map.of("WARDEN_PG_BIN", bin.toString());
            try (PostgresServer postgres = PostgresServer.builder().environment(env::get).start()) {
                assertThat(postgres.psql("select 1")).isEqualTo("1");
            }
        }

        @Test
        @DisplayName("WARDEN_PG_BIN without the server binaries fails loudly")
        void badBinaryDirectory(@TempDir Path dir) {
            Map<String, String> env = Map.of("WARDEN_PG_BIN", dir.toString());
            assertThatThrownBy(() -> PostgresServer.builder().environment(env::get).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("WARDEN_PG_BIN=" + dir);
        }

        @Test
        @DisplayName("no binaries anywhere: the message says how to install them")
        void binariesNotFound(@TempDir Path emptyVersionsRoot) {
            Map<String, String> env = Map.of("PATH", emptyVersionsRoot.toString());
            assertThatThrownBy(() -> PostgresBinaries.serverDirectory(env::get, emptyVersionsRoot))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("PostgreSQL server binaries not found: install them (Debian/Ubuntu: apt-get install -y"
                            + " postgresql), or set WARDEN_PG_BIN to their directory, or WARDEN_PG_URL to a running server");
        }
    }

    private static boolean refusesConnections(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int closedPort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record RawResult(int exitCode, String stdout) {
    }

    /** The psql binary as a user would type it, independent of testkit's own client. */
    private static RawResult rawPsql(PostgresServer postgres, Map<String, String> env, String sql) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("psql", "-X", "-w",
                "-h", postgres.host(), "-p", Integer.toString(postgres.port()),
                "-U", postgres.user(), "-d", postgres.database(), "-Atc", sql)
                .redirectErrorStream(true);
        builder.environment().putAll(env);
        Process process = builder.start();
        process.getOutputStream().close();
        if (!process.waitFor(PATIENT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("psql did not finish within " + PATIENT);
        }
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return new RawResult(process.exitValue(), process.exitValue() == 0 ? out : "");
    }

    /** An interactive psql session kept open across faults: one backend, lines read as they arrive. */
    private static final class Session implements AutoCloseable {

        private final Process process;
        private final OutputStream stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        private Session(Process process) {
            this.process = process;
            this.stdin = process.getOutputStream();
            Thread reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = out.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // Session ended.
                }
            }, "psql-session");
            reader.setDaemon(true);
            reader.start();
        }

        static Session open(PostgresServer postgres) throws IOException {
            return new Session(new ProcessBuilder("psql", "-X", "-w", "-q", "-At",
                    "-h", postgres.host(), "-p", Integer.toString(postgres.port()),
                    "-U", postgres.user(), "-d", postgres.database(), "-f", "-")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start());
        }

        void send(String sql) throws IOException {
            stdin.write((sql + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        /** The next output line, waiting up to {@code timeout}; {@code null} if none came. */
        String nextLine(Duration timeout) throws InterruptedException {
            return lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** A line that has already arrived, or {@code null}. */
        String pollLine() {
            return lines.poll();
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
