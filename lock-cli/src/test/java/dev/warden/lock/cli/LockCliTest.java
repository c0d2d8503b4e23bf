package dev.warden.lock.cli;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LostReason;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The lock CLI against a real Redis: show, an audited forced release the holder is told of, bad input. */
class LockCliTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /**
     * Connecting is not what this class tests: a cold JVM's first Lettuce connection on a loaded CI host has taken
     * longer than the 5 s default, so every client here (the holder's and each command's) gets 20 s, as the kit's do.
     */
    private static final String CONNECT_TIMEOUT = "20s";

    private final String namespace = "cli-" + UUID.randomUUID().toString().substring(0, 8);
    private LockClient holderClient;
    private Path slowConnect;

    @BeforeEach
    void settingsFile(@TempDir Path dir) throws Exception {
        slowConnect = Files.writeString(dir.resolve("connect.properties"), "warden.lock.connect-timeout=" + CONNECT_TIMEOUT + "\n");
    }

    @AfterEach
    void close() {
        if (holderClient != null) {
            holderClient.close();
        }
    }

    private record Ran(int exit, String out, String err) {
    }

    private Ran run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = LockCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Ran(exit, out.toString(), err.toString());
    }

    private String[] with(String... args) {
        String[] all = java.util.Arrays.copyOf(args, args.length + 8);
        System.arraycopy(new String[] {"--backend", "redis", "--endpoints", redis.server().uri(), "--namespace", namespace,
                "--settings", slowConnect.toString()}, 0, all, args.length, 8);
        return all;
    }

    @Test
    @DisplayName("list prints every held lock; show prints the holder and its token; release by that token ends the hold, the holder is told FORCED; then show says free")
    void showAndRelease() throws Exception {
        holderClient = LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.namespace", namespace, "warden.lock.ttl", "900ms", "warden.lock.connect-timeout", CONNECT_TIMEOUT));
        Lease lease = holderClient.lock("merchant:42").acquire();
        CompletableFuture<LeaseLost> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);

        holderClient.lock("merchant:7").acquire();
        Ran listed = run(with("list"));
        assertThat(listed.exit()).isZero();
        assertThat(listed.out().lines().toList()).hasSize(2).satisfiesExactly(
                l -> assertThat(l).startsWith("merchant:42\t").endsWith("\t" + lease.fencingToken()),
                l -> assertThat(l).startsWith("merchant:7\t"));

        Ran shown = run(with("show", "merchant:42"));
        assertThat(shown.exit()).isZero();
        assertThat(shown.out()).contains("held by").contains("with token " + lease.fencingToken());

        Ran wrong = run(with("release", "merchant:42", "--token", Long.toString(lease.fencingToken() + 1), "--operator", "alice",
                "--why", "a token nobody holds"));
        assertThat(wrong.exit()).isEqualTo(1);
        assertThat(wrong.out()).contains("nothing released");
        assertThat(lease.isValid()).isTrue();

        Ran released = run(with("release", "merchant:42", "--token", Long.toString(lease.fencingToken()), "--operator", "alice",
                "--why", "INC-1234 export hung"));
        assertThat(released.exit()).isZero();
        // Told at the holder's next renewal (a third of its 900 ms TTL); the deadline is slack for a loaded host.
        assertThat(lost.get(5, TimeUnit.SECONDS).reason()).as("why the holder lost its lease").isEqualTo(LostReason.FORCED);

        Ran free = run(with("show", "merchant:42"));
        assertThat(free.exit()).isEqualTo(1);
        assertThat(free.out()).contains("is free");
    }

    @Test
    @DisplayName("the settings come from a file; a release without --operator or --why is a usage error (2) and ends nothing")
    void settingsFileAndUsage(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("warden.properties");
        Files.writeString(file, "warden.lock.backend=redis\nwarden.lock.endpoints=" + redis.server().uri()
                + "\nwarden.lock.namespace=" + namespace + "\nwarden.lock.connect-timeout=" + CONNECT_TIMEOUT + "\n");
        holderClient = LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.namespace", namespace, "warden.lock.connect-timeout", CONNECT_TIMEOUT));
        Lease lease = holderClient.lock("job").acquire();
        assertThat(run("show", "job", "--settings", file.toString()).out()).contains("with token " + lease.fencingToken());
        Ran noWhy = run("release", "job", "--token", Long.toString(lease.fencingToken()), "--operator", "alice",
                "--settings", file.toString());
        assertThat(noWhy.exit()).isEqualTo(2);
        assertThat(noWhy.err()).contains("--why");
        Ran blank = run("release", "job", "--token", Long.toString(lease.fencingToken()), "--operator", " ", "--why", "x",
                "--settings", file.toString());
        assertThat(blank.exit()).isEqualTo(2);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    @DisplayName("an endpoint with a password is refused (2) without echoing it; an unknown backend is a configuration error (2)")
    void secretsAndBadBackend() {
        Ran secret = run("show", "x", "--backend", "redis", "--endpoints", "redis://user:hunter2@127.0.0.1:1");
        assertThat(secret.exit()).isEqualTo(2);
        assertThat(secret.out() + secret.err()).doesNotContain("hunter2").contains("password");
        Ran unknown = run("show", "x", "--backend", "nosuch", "--endpoints", "nosuch://127.0.0.1:1");
        assertThat(unknown.exit()).isEqualTo(2);
    }
}
