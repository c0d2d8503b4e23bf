package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The primary dies (SIGKILL) while three clients' workers contend on three locks, each grant
 * writing to a fenced register per lock; the writes of the last moments before it dies may be lost
 * where the backend's replication allows it. A fourth client holds two more locks through it: one
 * taken before replication was held back, one after (whose grant the new primary may never see).
 * Afterwards: no token went back (the history checker over every grant before and after), the first
 * token after of each lock is higher than its highest before, no fenced register accepted a write from a holder
 * whose successor had written or refused one from a holder nobody had succeeded, every lease that was
 * lost was told so within one renewal interval of the new primary, and the lock taken before the
 * cut is still held if the failover left it time to renew on the new primary. The run prints its
 * figures on one line starting {@code FAILOVER}, with how many grants overlapped in time (what the
 * backend's failure model allows: the README's table of what a switch of backend buys is made of
 * these lines).
 */
abstract class FailoverClauses {

    private static final int CLIENTS = 3;
    private static final int THREADS_PER_CLIENT = 2;
    private static final int NAMES = 3;

    private final LockFailoverContractTest kit;

    FailoverClauses(LockFailoverContractTest kit) {
        this.kit = kit;
    }

    /** One write to a fenced register, in the order the register saw them. */
    private record Write(String name, long token, boolean accepted, long nanos) {
    }

    /** The registers and the log of their writes, under one monitor so the log's order is theirs. */
    private static final class Registers {
        private final Map<String, FencedRegister> byName = new HashMap<>();
        private final List<Write> log = new ArrayList<>();

        synchronized boolean write(String name, long token) {
            boolean accepted = byName.computeIfAbsent(name, n -> new FencedRegister()).write(token, token);
            log.add(new Write(name, token, accepted, System.nanoTime()));
            return accepted;
        }

        synchronized List<Write> log() {
            return List.copyOf(log);
        }
    }

    @Test
    @DisplayName("no token goes back, no superseded holder writes, and every lost lease is told within a renewal interval")
    void failoverMidRun() throws Exception {
        LockHistory history = new LockHistory();
        List<LockClient> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            clients.add(kit.observedClient(history.observer("client" + c)));
        }
        List<String> all = kit.namesOnOnePrimary(NAMES + 2);
        List<String> names = all.subList(0, NAMES);
        LockClient holder = kit.observedClient(history.observer("holder"));
        Lease beforeCut = holder.lock(all.get(NAMES)).acquire();
        Lease afterCut;
        Registers registers = new Registers();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = kit.threads(CLIENTS * THREADS_PER_CLIENT);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < CLIENTS * THREADS_PER_CLIENT; t++) {
            LockClient client = clients.get(t % CLIENTS);
            work.add(pool.submit(() -> contend(client, names, registers, stop)));
        }
        long beforeCutEndsAt;
        long killedAt;
        long newPrimaryAt;
        int grantsBeforeCut;
        int grantsBeforeKill;
        Rival rival;
        try {
            Await.until(kit.slack().multipliedBy(5), "the run warms up", () -> history.grants() >= 30);
            grantsBeforeCut = history.grants();
            // The new primary knows the lease taken before the cut as of the cut: a renewal its holder gets
            // answered while replication is held back dies with the old primary. So its lease there ends no
            // earlier than what it has left now (read before the cut, on the send time of its last confirmation).
            long readAt = System.nanoTime();
            beforeCutEndsAt = readAt + beforeCut.remaining().toNanos();
            kit.holdBackReplication(kit.namespace(), all);
            afterCut = holder.lock(all.get(NAMES + 1)).acquire();
            Await.until(kit.slack().multipliedBy(5), "grants that only the dying primary records",
                    () -> history.grants() >= grantsBeforeCut + 10);
            grantsBeforeKill = history.grants();
            killedAt = System.nanoTime();
            kit.killPrimary(kit.namespace(), all);
            kit.awaitNewPrimary(kit.namespace(), all);
            newPrimaryAt = System.nanoTime();
            rival = rivalFor(all.get(NAMES + 1), afterCut, history, registers);
            int grantsAtNewPrimary = history.grants();
            // Past the TTL of every lock the dead primary's last moments left behind, and then some grants.
            long settled = newPrimaryAt + kit.ttl().plus(kit.renewInterval()).toNanos();
            Await.until(kit.ttl().plus(kit.slack().multipliedBy(10)), "the run goes on on the new primary",
                    () -> System.nanoTime() - settled > 0 && history.grants() >= grantsAtNewPrimary + 30);
        } finally {
            stop.set(true);
        }
        for (Future<?> f : work) {
            f.get(1, TimeUnit.MINUTES);
        }

        List<LockHistory.Event> grants = history.events().stream().filter(e -> e.kind() == LockHistory.Kind.GRANT)
                .sorted((a, b) -> Long.compare(a.nanos(), b.nanos())).toList();
        // Per lock: tokens are ordered per name only. Where a token is fixed when a contender queues (etcd's
        // create revision, ZooKeeper's czxid), a waiter queued on one lock before the kill and granted after
        // it rightly shows a lower token than a grant of another lock just before the kill.
        Map<String, Long> highestBefore = new TreeMap<>();
        Map<String, Long> firstAfter = new TreeMap<>();
        for (LockHistory.Event g : grants) {
            if (g.nanos() < killedAt) {
                highestBefore.merge(g.name(), g.token(), Math::max);
            } else if (g.nanos() > newPrimaryAt) {
                firstAfter.merge(g.name(), g.token(), Math::min);
            }
        }
        long margin = firstAfter.entrySet().stream().filter(e -> highestBefore.containsKey(e.getKey()))
                .mapToLong(e -> e.getValue() - highestBefore.get(e.getKey())).min().orElseThrow();
        List<Long> detectedAfterNewPrimary = new ArrayList<>();
        history.lossesDetected().values().forEach(at -> detectedAfterNewPrimary.add(
                TimeUnit.NANOSECONDS.toMillis(at - newPrimaryAt)));
        detectedAfterNewPrimary.sort(Long::compare);
        List<Write> writes = registers.log();
        // Holders whose intervals overlapped in time: what a backend's failure model allows, counted, not
        // asserted here; the fenced registers must still refuse every superseded holder.
        long overlaps = history.violations().stream().filter(v -> v.startsWith("overlap")).count();
        System.out.println("FAILOVER " + kit.getClass().getSimpleName() + ": new primary after "
                + TimeUnit.NANOSECONDS.toMillis(newPrimaryAt - killedAt) + " ms; grants " + grantsBeforeCut + " before the cut, "
                + (grantsBeforeKill - grantsBeforeCut) + " while cut, " + (grants.size() - grantsBeforeKill) + " after the kill; "
                + "leases lost " + detectedAfterNewPrimary.size() + ", told at (ms after the new primary) " + detectedAfterNewPrimary
                + "; the lease taken before the cut had " + TimeUnit.NANOSECONDS.toMillis(beforeCutEndsAt - newPrimaryAt)
                + " ms left there; first token after less highest before, per lock, at least " + margin + "; grants overlapping in time "
                + overlaps + "; fenced writes refused "
                + writes.stream().filter(w -> !w.accepted()).count() + " of " + writes.size());

        assertThat(history.tokenOrderViolations()).as("tokens in grant order, before and after the failover").isEmpty();
        if (!kit.overlapsAllowed()) {
            assertThat(history.violations()).as("holders overlapping in time, which this backend's failure model excludes")
                    .isEmpty();
        }
        firstAfter.forEach((name, first) -> {
            if (highestBefore.containsKey(name)) {
                assertThat(first).as("the first token of '" + name + "' after the failover").isGreaterThan(highestBefore.get(name));
            }
        });
        assertThat(fencingViolations(grants, writes)).as("the fenced registers").isEmpty();
        Duration bound = kit.renewInterval().plus(kit.slack());
        assertThat(detectedAfterNewPrimary).as("when each lost lease was told, after the new primary (ms)")
                .allSatisfy(ms -> assertThat(ms).isLessThanOrEqualTo(bound.toMillis()));
        // A lease outlives a failover that leaves it time to renew on the new primary; a slower failover may end
        // it, and then its holder must have been told. Its time there runs from the cut, not the kill, and from
        // its last confirmation before the cut, which may be up to a renewal interval earlier (so a failover
        // within its TTL less a renewal interval leaves some). Getting a renewal through takes the slack (the
        // client finding the new primary) and a quarter renewal interval: the keeper retries a renewal that
        // failed while the primary was away that much later.
        Duration failover = Duration.ofNanos(newPrimaryAt - killedAt);
        Duration leftAtNewPrimary = Duration.ofNanos(beforeCutEndsAt - newPrimaryAt);
        Duration toRenewThere = kit.slack().plus(kit.renewInterval().dividedBy(4));
        if (kit.leasesOutliveAShortFailover() && leftAtNewPrimary.compareTo(toRenewThere) > 0) {
            assertThat(beforeCut.isValid()).as("the lock taken before replication was held back is still held after a "
                    + failover.toMillis() + " ms failover that left it " + leftAtNewPrimary.toMillis()
                    + " ms to renew on the new primary").isTrue();
        } else if (!beforeCut.isValid()) {
            assertThat(history.lossesDetected()).as("the lease taken before the cut, lost in a " + failover.toMillis()
                    + " ms failover, was told").containsKey(LockHistory.leaseKey(beforeCut.name(), beforeCut.fencingToken()));
        }
        if (!afterCut.isValid()) {
            assertThat(history.lossesDetected()).as("the lease taken while replication was held back, lost, was told")
                    .containsKey(LockHistory.leaseKey(afterCut.name(), afterCut.fencingToken()));
        }
        System.out.println("FAILOVER " + kit.getClass().getSimpleName() + ": a rival asked for the lock taken while cut right"
                + " after the new primary: " + rival);
        if (!kit.overlapsAllowed()) {
            assertThat(rival.overlapped()).as("a rival granted the lock taken while cut while its lease was valid").isFalse();
        }
        assertThat(rival.staleWriteAccepted()).as("the superseded holder's write after the rival's").isFalse();
        System.out.println("FAILOVER " + kit.getClass().getSimpleName() + ": the lease taken before the cut "
                + (beforeCut.isValid() ? "kept" : "lost") + ", the lease taken while cut " + (afterCut.isValid() ? "kept" : "lost"));
        if (beforeCut.isValid()) {
            beforeCut.release();
        }
    }

    /**
     * What another client got when it asked for the lock taken while replication was held back, right after
     * the new primary: whether it was granted, whether the old lease still said it was valid then (two
     * holders at once), and whether the old holder's write after the rival's was refused by the fence.
     */
    private record Rival(boolean granted, boolean overlapped, boolean staleWriteRefused, boolean staleWriteAccepted) {
        @Override
        public String toString() {
            return granted ? "granted" + (overlapped ? " while the old lease was still valid (two holders)" : " after the old lease ended")
                    + ", the old holder's write then " + (staleWriteRefused ? "refused by the fence" : "accepted")
                    : "not granted (the old lease holds)";
        }
    }

    private Rival rivalFor(String name, Lease old, LockHistory history, Registers registers) {
        LockClient rival = kit.observedClient(history.observer("rival"));
        Optional<Lease> taken;
        try {
            taken = rival.lock(name).tryAcquire(Duration.ofSeconds(1));
        } catch (LockException e) {
            return new Rival(false, false, false, false);
        }
        if (taken.isEmpty()) {
            return new Rival(false, false, false, false);
        }
        boolean overlapped = old.isValid();
        registers.write(name, taken.get().fencingToken());
        boolean accepted = registers.write(name, old.fencingToken());
        taken.get().release();
        return new Rival(true, overlapped, !accepted, accepted);
    }

    /** Each worker: take a random lock, write its token, hold a moment, write again, release. */
    private Void contend(LockClient client, List<String> names, Registers registers, AtomicBoolean stop) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop.get()) {
            String name = names.get(random.nextInt(names.size()));
            DistributedLock lock = client.lock(name);
            Optional<Lease> lease;
            try {
                lease = lock.tryAcquire(Duration.ofSeconds(1));
            } catch (LockException e) {
                continue; // the primary is gone: the loop rode it out until its wait ended
            }
            if (lease.isEmpty()) {
                continue;
            }
            Lease held = lease.get();
            try {
                registers.write(name, held.fencingToken());
                Thread.sleep(random.nextInt(5, 40)); // the work the lock guards
                if (held.isValid()) {
                    registers.write(name, held.fencingToken());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            } finally {
                try {
                    held.release();
                } catch (LockException e) {
                    // not confirmed while the primary was away: the lock expires within its TTL
                }
            }
        }
        return null;
    }

    /**
     * Kleppmann's fencing, checked on the log: once a holder's successor (a later grant of the same
     * lock) has written, no write of the holder is accepted; and a write is refused only when its
     * holder has a successor already.
     */
    private static List<String> fencingViolations(List<LockHistory.Event> grantsInOrder, List<Write> writes) {
        Map<String, TreeMap<Long, Long>> grantedAt = new HashMap<>(); // name -> token -> grant time
        Map<String, List<LockHistory.Event>> byName = new HashMap<>();
        for (LockHistory.Event g : grantsInOrder) {
            grantedAt.computeIfAbsent(g.name(), n -> new TreeMap<>()).put(g.token(), g.nanos());
            byName.computeIfAbsent(g.name(), n -> new ArrayList<>()).add(g);
        }
        List<String> problems = new ArrayList<>();
        Map<String, Long> newestWriterGrant = new HashMap<>();
        for (Write w : writes) {
            Long myGrant = grantedAt.getOrDefault(w.name(), new TreeMap<>()).get(w.token());
            if (myGrant == null) {
                continue; // the grant's event has not been recorded (it cannot happen before the write; be lenient)
            }
            boolean superseded = byName.get(w.name()).stream().anyMatch(g -> g.nanos() > myGrant && g.nanos() < w.nanos());
            if (w.accepted()) {
                Long newest = newestWriterGrant.get(w.name());
                if (newest != null && newest > myGrant) {
                    problems.add("'" + w.name() + "' accepted token " + w.token() + " after a later holder had written");
                }
                newestWriterGrant.merge(w.name(), myGrant, Math::max);
            } else if (!superseded) {
                problems.add("'" + w.name() + "' refused token " + w.token() + " whose holder nobody had succeeded");
            }
        }
        return problems;
    }
}
