package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
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
        Map<String, Object> s = new LinkedHashMap<>(kit.settings());
        s.put("warden.lock.namespace", kit.namespace());
        s.put("warden.lock.ttl", kit.processTtl());
        HolderProcess.Child holder = HolderProcess.start(name, s, close -> kit.closeAfter(close::run));
        LockClient c = kit.client();
        // Held across several renewals before the kill: the child's keeper works.
        Await.during(kit.processTtl(), "the live holder keeps the lock", () -> kit.onServer(name));
        assertThat(c.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        Lease next = c.lock(name).tryAcquire(kit.processTtl().plus(kit.slack())).orElseThrow(
                () -> new AssertionError("the dead holder's lock was not freed after its TTL"));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(next.fencingToken()).isGreaterThan(holder.token());
        assertThat(took).isLessThan(kit.processTtl().plus(kit.slack()));
        next.release();
    }
}
