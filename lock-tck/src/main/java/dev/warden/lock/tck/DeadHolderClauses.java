package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder killed without releasing: its lock is freed after its TTL.
 */
abstract class DeadHolderClauses {

    private final LockFaultContractTest kit;

    DeadHolderClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("frees the lock after its TTL, and the next token is higher")
    void freedAfterTtl() throws Exception {
        String name = kit.newName();
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-cp", System.getProperty("java.class.path"),
                HolderProcess.class.getName(), name));
        Map<String, Object> s = new LinkedHashMap<>(kit.settings());
        s.put("warden.lock.namespace", kit.namespace());
        s.put("warden.lock.ttl", kit.ttl());
        s.forEach((k, v) -> command.add(k + "=" + v));
        Process holder = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        kit.closeAfter(holder::destroyForcibly);
        long token;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
            CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            String granted = line.get(30, TimeUnit.SECONDS);
            assertThat(granted).startsWith("GRANTED ");
            token = Long.parseLong(granted.substring("GRANTED ".length()).trim());
            LockClient c = kit.client();
            // Held across several renewals before the kill: the child's keeper works.
            Await.during(kit.ttl().multipliedBy(2), "the live holder keeps the lock", () -> kit.onServer(name));
            assertThat(c.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            Lease next = c.lock(name).tryAcquire(kit.ttl().plus(kit.slack())).orElseThrow(
                    () -> new AssertionError("the dead holder's lock was not freed after its TTL"));
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(next.fencingToken()).isGreaterThan(token);
            assertThat(took).isLessThan(kit.ttl().plus(kit.slack()));
            next.release();
        }
    }
}
