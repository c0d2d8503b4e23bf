package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.FencedRegister;
import dev.warden.lock.tck.LockHistory;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.ZooKeeperEnsemble;
import dev.warden.testkit.ZooKeeperEnsembleExtension;
import dev.warden.testkit.ZooKeeperServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Mutual exclusion and fencing across a leader election. */
@DisplayName("ZooKeeper ensemble failover")
class ZooKeeperEnsembleFailoverTest {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static final int GRANTS_BEFORE = 40;
    private static final int GRANTS_AFTER = 40;

    @Test
    @DisplayName("the leader killed during a contended run: no overlap, no token regression, and the run goes on")
    void leaderKilledDuringContendedRun() throws Exception {
        ZooKeeperEnsemble ensemble = zookeeper.ensemble();
        ZooKeeperInspector.warmUp(ensemble.servers().stream().map(ZooKeeperServer::connectString).toArray(String[]::new));
        LockHistory history = new LockHistory();
        FencedRegister register = new FencedRegister();
        String name = "failover";
        List<LockClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger unavailable = new AtomicInteger();
        try {
            for (int c = 0; c < 3; c++) {
                clients.add(LockClient.create(settings(ensemble), history.observer("client" + c)));
            }
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                LockClient client = clients.get(t % 3);
                workers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        try {
                            Optional<Lease> acquired = client.lock(name).tryAcquire(Duration.ofSeconds(5));
                            if (acquired.isEmpty()) {
                                continue;
                            }
                            try (Lease lease = acquired.get()) {
                                if (lease.isValid()) {
                                    register.write(lease.fencingToken(), lease.fencingToken());
                                }
                                grants.incrementAndGet();
                                Thread.sleep(2);
                            }
                        } catch (LockException e) {
                            // An election drops every connection: acquisitions and releases in flight
                            // fail UNAVAILABLE, and the worker tries again.
                            unavailable.incrementAndGet();
                            Thread.sleep(50);
                        }
                    }
                    return null;
                }));
            }
            Await.until(Duration.ofSeconds(60), GRANTS_BEFORE + " grants", () -> grants.get() >= GRANTS_BEFORE);
            ZooKeeperServer leader = ensemble.leader();
            int atKill = grants.get();
            leader.kill();
            ZooKeeperServer next = ensemble.leader();
            assertThat(next).isNotSameAs(leader);
            Await.until(Duration.ofSeconds(90), GRANTS_AFTER + " grants after the kill", () -> grants.get() >= atKill + GRANTS_AFTER);
            stop.set(true);
            for (Future<?> w : workers) {
                w.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
            for (LockClient c : clients) {
                c.close();
            }
        }
        assertThat(history.violations()).as("overlaps and token regressions").isEmpty();
        assertThat(history.grants()).isGreaterThanOrEqualTo(GRANTS_BEFORE + GRANTS_AFTER);
    }

    private static Map<String, Object> settings(ZooKeeperEnsemble ensemble) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", ensemble.endpoints());
        s.put("warden.lock.namespace", "failover");
        // The session must outlast an election and a reconnection.
        s.put("warden.lock.ttl", Duration.ofSeconds(3));
        s.put("warden.lock.request-timeout", Duration.ofSeconds(1));
        return s;
    }
}
