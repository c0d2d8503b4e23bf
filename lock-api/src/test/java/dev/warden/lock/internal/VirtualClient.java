package dev.warden.lock.internal;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.internal.time.VirtualClock;
import dev.warden.lock.spi.LockConfig;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A lock client on a virtual clock over a {@link ScriptedDriver}, every task on the test's thread,
 * so a test decides when time passes and when the "server" answers.
 */
final class VirtualClient implements AutoCloseable {

    static final Duration TTL = Duration.ofSeconds(3);
    /** 1% of the TTL plus 2 ms. */
    static final Duration DRIFT = Duration.ofMillis(32);

    final VirtualClock clock = new VirtualClock();
    final ScriptedDriver driver = new ScriptedDriver(clock);
    final List<LeaseLost> losses = new CopyOnWriteArrayList<>();
    final List<LeakDetector.Leak> leaks = new CopyOnWriteArrayList<>();
    final LockClient client;

    VirtualClient() {
        this(Duration.ofSeconds(30), Optional.empty());
    }

    VirtualClient(Duration outageTolerance, Optional<Duration> maxHoldTime) {
        this(outageTolerance, maxHoldTime, 0);
    }

    VirtualClient(Duration outageTolerance, Optional<Duration> maxHoldTime, int fencingEpoch) {
        LockConfig config = new LockConfig("scripted", List.of("scripted://test"), "test", TTL, Duration.ofSeconds(1),
                Duration.ofSeconds(1), Map.of());
        LockObserver observer = new LockObserver() {
            @Override
            public void lost(LeaseLost event) {
                losses.add(event);
            }
        };
        client = DefaultLockClient.open(DefaultLockClient.testParts(new ClientSettings(config, outageTolerance, maxHoldTime, fencingEpoch),
                driver, observer, clock, LeakDetector.everySite(leaks::add)));
    }

    @Override
    public void close() {
        client.close();
    }
}
