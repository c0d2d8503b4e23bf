package dev.warden.lock.tck;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Election;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
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
 * A holder in another process killed (SIGKILL) or frozen (SIGSTOP) without releasing: a lock, an
 * election's term, a semaphore's permits and a read hold come free within the holder's TTL, the next
 * token is higher, and a frozen holder resumed is told LOST and fenced off. What these clauses test is
 * the server expiring a silent holder, which is the same over every transport and topology of a
 * backend: they run once per backend ({@link LockProcessFaultContractTest}), not once per variant.
 */
abstract class ProcessFaultClauses {

    private final LockFaultContractTest kit;

    ProcessFaultClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("frees the lock after its TTL, and the next token is higher")
    void freedAfterTtl() throws Exception {
        String name = kit.newName();
        HolderProcess.Child holder = HolderProcess.start(name, childSettings("lock"), close -> kit.closeAfter(close::run));
        LockClient c = kit.client();
        // Held across several renewals before the kill: the child's keeper works.
        Await.during(kit.processTtl(), "the live holder keeps the lock", () -> kit.onServer(name),
                () -> "the holder process said: " + quietly(holder));
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

    @Test
    @DisplayName("a leader in another process killed (SIGKILL) ends its term within its TTL: a waiting candidate leads in a higher term, and the observer sees it")
    void killedLeaderIsSucceeded() throws Exception {
        String election = kit.newName();
        // The child holds the election's lock: a leader whose process dies without a word.
        HolderProcess.Child leader = HolderProcess.start("election:" + election, childSettings("lock"), close -> kit.closeAfter(close::run));
        LockClient client = kit.client();
        Candidacy waiting = client.election(election).join("next", new ElectionClauses.Heard());
        Await.during(kit.renewInterval().multipliedBy(2), "the live leader in the other process keeps its term",
                () -> waiting.leadership().isEmpty(), () -> "the leader's process said: " + quietly(leader));
        leader.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Await.until(kit.processTtl().plus(kit.slack()), "the waiting candidate leads after the killed leader's TTL",
                () -> waiting.leadership().isPresent());
        long term = waiting.leadership().orElseThrow().fencingToken();
        assertThat(term).isGreaterThan(leader.token());
        if (kit.observedTermExact()) {
            assertThat(client.election(election).leader()).contains(new Election.Leader("next", term));
        }
        waiting.close();
    }

    @Test
    @DisplayName("a leader in another process frozen (SIGSTOP) past its TTL is succeeded in a higher term; resumed, it is told LOST and its fenced write is refused")
    void frozenLeaderIsSucceeded() throws Exception {
        String election = kit.newName();
        HolderProcess.Child leader = HolderProcess.start("election:" + election, childSettings("lock"), close -> kit.closeAfter(close::run));
        Candidacy waiting = kit.client().election(election).join("next", new ElectionClauses.Heard());
        Await.during(kit.renewInterval().multipliedBy(2), "the live leader keeps its term", () -> waiting.leadership().isEmpty(),
                () -> "the leader's process said: " + quietly(leader));
        FencedRegister register = new FencedRegister();
        assertThat(register.write(leader.token(), 1)).isTrue();
        leader.signal("STOP");
        try {
            Await.until(kit.processTtl().plus(kit.slack()), "the waiting candidate leads once the frozen leader's TTL passed",
                    () -> waiting.leadership().isPresent());
            long term = waiting.leadership().orElseThrow().fencingToken();
            assertThat(term).isGreaterThan(leader.token());
            assertThat(register.write(term, 2)).isTrue();
        } finally {
            leader.signal("CONT");
        }
        String told = leader.nextLine(kit.processTtl().dividedBy(3).plus(kit.slack()));
        assertThat(told).as("what the resumed leader's lease says").startsWith("LOST ");
        // The resumed leader's write, fenced by its old term, comes after the new leader's: refused.
        assertThat(register.write(leader.token(), 3)).isFalse();
        assertThat(register.value()).isEqualTo(2);
        waiting.close();
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
        Await.during(kit.renewInterval().multipliedBy(4), "the writer waits for the live reader", () -> !writer.isDone(),
                () -> "the reader's process said: " + quietly(reader));
        reader.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Lease w = writer.get(kit.processTtl().plus(kit.slack()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(w.fencingToken()).isGreaterThan(reader.token());
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
