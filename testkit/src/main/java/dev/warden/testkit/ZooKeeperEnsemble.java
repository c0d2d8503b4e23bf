package dev.warden.testkit;

import dev.warden.testkit.internal.FreePorts;
import dev.warden.testkit.internal.Wait;
import dev.warden.testkit.internal.ZooKeeperProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A ZooKeeper ensemble of real servers (three by default), each a child JVM like a standalone
 * {@link ZooKeeperServer}, on loopback ports, with fault controls per member and for the whole.
 *
 * <p>{@link #leader()} finds the leader by {@code srvr}; {@link ZooKeeperServer#kill()} and
 * {@link ZooKeeperServer#restart()} on a member crash and restart it (it rejoins as a follower);
 * {@link #pause()} freezes every member at once.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {

    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(30);
    private static final int LAUNCH_ATTEMPTS = 3;

    private final List<ZooKeeperServer> servers;

    private ZooKeeperEnsemble(List<ZooKeeperServer> servers) {
        this.servers = List.copyOf(servers);
    }

    /** Starts three servers and waits until each serves. */
    public static ZooKeeperEnsemble start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The members, in id order (server {@code i} has id {@code i + 1}). */
    public List<ZooKeeperServer> servers() {
        return servers;
    }

    public ZooKeeperServer server(int index) {
        return servers.get(index);
    }

    /** Every member, {@code 127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String connectString() {
        return servers.stream().map(ZooKeeperServer::connectString).collect(Collectors.joining(","));
    }

    /** Every member as Warden endpoints, {@code zookeeper://127.0.0.1:p1,zookeeper://...}. */
    public String endpoints() {
        return servers.stream().map(ZooKeeperServer::endpoint).collect(Collectors.joining(","));
    }

    /**
     * The member that reports {@code Mode: leader}, waiting up to 30 s for an election to settle.
     *
     * @throws IllegalStateException when no member leads in that time
     */
    public ZooKeeperServer leader() {
        ZooKeeperServer[] found = new ZooKeeperServer[1];
        boolean elected = Wait.until(LEADER_TIMEOUT, () -> {
            for (ZooKeeperServer s : servers) {
                if (s.isRunning() && !s.isPaused() && s.isLeader()) {
                    found[0] = s;
                    return true;
                }
            }
            return false;
        });
        if (!elected) {
            throw new IllegalStateException("no leader among " + servers + " within " + LEADER_TIMEOUT.toSeconds()
                    + " s; modes: " + modes());
        }
        return found[0];
    }

    /** Waits until every running, unpaused member serves requests (a quorum has formed). */
    public void awaitQuorum() {
        for (ZooKeeperServer s : servers) {
            if (s.isRunning() && !s.isPaused()) {
                s.awaitServing(ZooKeeperServer.START_TIMEOUT);
            }
        }
    }

    /** Freezes every member (SIGSTOP). */
    public void pause() {
        for (ZooKeeperServer s : servers) {
            if (s.isRunning() && !s.isPaused()) {
                s.pause();
            }
        }
    }

    /**
     * Thaws every paused member and, when it thawed any, returns once the ensemble has settled: one
     * leader and every other running member following, unchanged for five ticks. A leader whose
     * followers were frozen past the sync limit steps down within a tick or two of thawing, and an
     * election follows during which no session can be established; returning before it would hand
     * the next test an ensemble that is about to stop serving.
     *
     * @throws IllegalStateException when it does not settle within 30 s
     */
    public void resume() {
        boolean thawed = false;
        for (ZooKeeperServer s : servers) {
            if (s.isPaused()) {
                s.resume();
                thawed = true;
            }
        }
        if (thawed) {
            awaitSettled();
        }
    }

    /** Waits until one member leads, every other running one follows, and that has held for five ticks. */
    private void awaitSettled() {
        long window = servers.get(0).tickTime().multipliedBy(5).toNanos();
        long[] stableSince = {System.nanoTime()};
        String[] last = {""};
        boolean settled = Wait.until(LEADER_TIMEOUT, () -> {
            String modes = modes();
            long now = System.nanoTime();
            boolean led = servers.stream().filter(s -> s.isRunning() && !s.isPaused()).map(s -> s.mode().orElse(""))
                    .filter("leader"::equals).count() == 1
                    && servers.stream().filter(s -> s.isRunning() && !s.isPaused())
                    .allMatch(s -> s.mode().filter(m -> m.equals("leader") || m.equals("follower")).isPresent());
            if (!led || !modes.equals(last[0])) {
                last[0] = modes;
                stableSince[0] = now;
                return false;
            }
            return now - stableSince[0] >= window;
        });
        if (!settled) {
            throw new IllegalStateException("the ensemble did not settle within " + LEADER_TIMEOUT.toSeconds()
                    + " s after thawing; modes: " + modes());
        }
    }

    /** {@code true} when any member is paused. */
    public boolean isPaused() {
        return servers.stream().anyMatch(ZooKeeperServer::isPaused);
    }

    /** Resumes paused members, starts killed ones again and waits for the quorum. */
    public void heal() {
        resume();
        List<ZooKeeperServer> down = servers.stream().filter(s -> !s.isRunning()).toList();
        for (ZooKeeperServer s : down) {
            s.process().launch();
        }
        awaitQuorum();
    }

    /** Every member's mode, for messages. */
    public String modes() {
        return servers.stream().map(s -> s.connectString() + "=" + (s.isPaused() ? "paused"
                : s.isRunning() ? s.mode().orElse("not serving") : "down")).collect(Collectors.joining(", "));
    }

    /** Stops every member and deletes their directories; idempotent. */
    public void stop() {
        servers.forEach(ZooKeeperServer::stop);
    }

    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "ZooKeeperEnsemble[" + connectString() + "]";
    }

    /** Options of an ensemble. */
    public static final class Builder {

        private int size = 3;
        private Duration tickTime = ZooKeeperServer.DEFAULT_TICK;

        private Builder() {
        }

        /** The number of members, 3 by default. */
        public Builder size(int size) {
            if (size < 2 || size > 9) {
                throw new IllegalArgumentException("an ensemble has 2..9 members, not " + size);
            }
            this.size = size;
            return this;
        }

        /** The tick time (default 100 ms). */
        public Builder tickTime(Duration tickTime) {
            this.tickTime = ZooKeeperServer.checkTick(tickTime);
            return this;
        }

        /** Launches every member on free ports and waits until each serves. */
        public ZooKeeperEnsemble start() {
            for (int attempt = 1; ; attempt++) {
                List<ZooKeeperProcess> members = create();
                try {
                    members.forEach(ZooKeeperProcess::launch);
                    for (ZooKeeperProcess p : members) {
                        p.awaitServing(ZooKeeperServer.START_TIMEOUT);
                    }
                    List<ZooKeeperServer> servers = new ArrayList<>();
                    for (ZooKeeperProcess p : members) {
                        servers.add(new ZooKeeperServer(p, tickTime));
                    }
                    return new ZooKeeperEnsemble(servers);
                } catch (RuntimeException e) {
                    boolean portTaken = members.stream().anyMatch(ZooKeeperProcess::portWasTaken);
                    members.forEach(ZooKeeperProcess::stop);
                    if (!portTaken || attempt == LAUNCH_ATTEMPTS) {
                        throw e;
                    }
                }
            }
        }

        private List<ZooKeeperProcess> create() {
            Set<Integer> taken = new HashSet<>();
            int[][] ports = new int[size][3];
            for (int i = 0; i < size; i++) {
                for (int k = 0; k < 3; k++) {
                    int p;
                    do {
                        p = FreePorts.find();
                    } while (!taken.add(p));
                    ports[i][k] = p;
                }
            }
            long tick = tickTime.toMillis();
            List<String> peers = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                peers.add("server." + (i + 1) + "=127.0.0.1:" + ports[i][1] + ":" + ports[i][2]);
            }
            List<ZooKeeperProcess> members = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                List<String> config = ZooKeeperServer.commonConfig(tickTime, ports[i][0]);
                // Followers have 10 s to sync with a new leader and 2 s to answer it afterwards.
                config.add("initLimit=" + Math.max(10, 10_000 / tick));
                config.add("syncLimit=" + Math.max(5, 2_000 / tick));
                config.add("reconfigEnabled=false");
                config.add("standaloneEnabled=false");
                config.addAll(peers);
                members.add(new ZooKeeperProcess(ZooKeeperProcess.createTempDir(), i + 1, ports[i][0], config, List.of()));
            }
            return members;
        }
    }
}
