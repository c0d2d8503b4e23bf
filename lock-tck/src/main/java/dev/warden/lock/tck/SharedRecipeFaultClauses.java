package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.Semaphore;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Semaphores and read-write locks through faults: a holder killed without releasing gives its permits (or
 * its read hold) back within the TTL, and waiters ride out a short server pause.
 */
abstract class SharedRecipeFaultClauses {

    private static final Duration OUTAGE = Duration.ofSeconds(1);

    private final LockFaultContractTest kit;

    SharedRecipeFaultClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a holder of 2 permits killed (SIGKILL) gives them back within its TTL, and the next token is higher")
    void killedPermitHolder() throws Exception {
        if (SharedRecipeClauses.refused(kit)) {
            return;
        }
        String name = kit.newName();
        HolderProcess.Child holder = HolderProcess.start(name, childSettings("permits:2/2"), close -> kit.closeAfter(close::run));
        Semaphore semaphore = kit.client().semaphore(name, 2);
        Await.during(kit.renewInterval().multipliedBy(4), "the live holder keeps its permits",
                () -> semaphore.tryAcquire(Duration.ZERO).map(l -> {
                    l.release();
                    return false;
                }).orElse(true), () -> "the holder process said: " + quietly(holder));
        holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Lease both = semaphore.tryAcquire(2, kit.processTtl().plus(kit.slack())).orElseThrow(
                () -> new AssertionError("the dead holder's permits did not come back within its TTL"));
        assertThat(both.fencingToken()).isGreaterThan(holder.token());
        both.release();
    }

    @Test
    @DisplayName("a reader killed (SIGKILL) lets a waiting writer in within its TTL")
    void killedReader() throws Exception {
        if (SharedRecipeClauses.refused(kit)) {
            return;
        }
        String name = kit.newName();
        HolderProcess.Child reader = HolderProcess.start(name, childSettings("read"), close -> kit.closeAfter(close::run));
        CompletableFuture<Lease> writer = kit.client().readWriteLock(name).writeLock().acquireAsync();
        Await.during(kit.renewInterval().multipliedBy(4), "the writer waits for the live reader", () -> !writer.isDone());
        reader.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Lease w = writer.get(kit.processTtl().plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(w.fencingToken()).isGreaterThan(reader.token());
        w.release();
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

    /** What the child said after its grant (its loss, if it was lost), without waiting long. */
    private static String quietly(HolderProcess.Child child) {
        try {
            return String.valueOf(child.nextLine(Duration.ofMillis(200)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    private Map<String, Object> childSettings(String take) {
        Map<String, Object> s = new LinkedHashMap<>(kit.settings());
        s.put("warden.lock.namespace", kit.namespace());
        s.put("warden.lock.ttl", kit.processTtl());
        s.put(HolderProcess.TAKE, take);
        return s;
    }
}
