package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code redis-cli --cluster ...}: how a cluster is created and how a half-done resharding is repaired. */
public final class RedisCli {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private RedisCli() {
    }

    /** {@code redis-cli --cluster create <nodes> --cluster-replicas 1 --cluster-yes}. */
    public static void createCluster(List<String> hostPorts) {
        List<String> args = new ArrayList<>(List.of("--cluster", "create"));
        args.addAll(hostPorts);
        args.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        run(args, true);
    }

    /** {@code redis-cli --cluster fix <node> --cluster-yes}: finishes or undoes open slot migrations. */
    public static void fixCluster(String hostPort) {
        run(List.of("--cluster", "fix", hostPort, "--cluster-yes"), false);
    }

    private static void run(List<String> args, boolean mustSucceed) {
        List<String> command = new ArrayList<>(List.of(RedisBinaries.cli().toString()));
        command.addAll(args);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            boolean exited = p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            if (mustSucceed && (!exited || p.exitValue() != 0)) {
                throw new IllegalStateException("redis-cli " + String.join(" ", args) + " failed:\n"
                        + new String(out, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run redis-cli", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running redis-cli " + String.join(" ", args), e);
        }
    }
}
