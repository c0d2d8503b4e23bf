package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Semaphores and read-write locks through faults: waiters ride out a short server pause. (A holder
 * killed in another process: {@link ProcessFaultClauses}.)
 */
abstract class SharedRecipeFaultClauses {

    private static final Duration OUTAGE = Duration.ofSeconds(1);

    private final LockFaultContractTest kit;

    SharedRecipeFaultClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a permit request and a writer waiting through a ~1 s server pause are granted afterwards")
    void rideOutServerPause() throws Exception {
        if (SharedRecipeClauses.refused(kit)) {
            return;
        }
        String name = kit.newName();
        LockClient a = kit.client();
        LockClient b = kit.client();
        Lease permit = a.semaphore(name, 1).acquire();
        Lease reading = a.readWriteLock(name).readLock().acquire();
        Duration wait = OUTAGE.plus(kit.ttl()).plus(kit.slack()).multipliedBy(2);
        CompletableFuture<Lease> waitingPermit = b.semaphore(name, 1).acquireAsync(1, wait);
        CompletableFuture<Lease> writer = b.readWriteLock(name).writeLock().acquireAsync(wait);
        Await.during(Duration.ofMillis(200), "both wait", () -> !waitingPermit.isDone() && !writer.isDone());
        kit.pauseServer();
        try {
            Await.during(OUTAGE, "neither gives up during the pause", () -> !waitingPermit.isDone() && !writer.isDone());
        } finally {
            kit.resumeServer();
        }
        for (Lease held : new Lease[] {permit, reading}) {
            try {
                held.release();
            } catch (LockException e) {
                // Not confirmed after the pause: the hold then expires within its TTL, which the waits allow for.
                assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            }
        }
        Lease p = waitingPermit.get(wait.plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        Lease w = writer.get(wait.plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(p.fencingToken()).isGreaterThan(permit.fencingToken());
        assertThat(w.fencingToken()).isGreaterThan(reading.fencingToken());
        p.release();
        w.release();
    }
}
