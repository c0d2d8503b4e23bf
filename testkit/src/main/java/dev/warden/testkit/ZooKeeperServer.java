package dev.warden.testkit;

import dev.warden.testkit.internal.FourLetterWords;
import dev.warden.testkit.internal.FreePorts;
import dev.warden.testkit.internal.ZooKeeperProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A real ZooKeeper server for an integration test, with fault controls: a standalone server, or one
 * member of a {@link ZooKeeperEnsemble}.
 *
 * <p>Each server is a child JVM launched from ZooKeeper's own jar ({@code QuorumPeerMain}) taken
 * from this JVM's class path, on a free 127.0.0.1 port with a fresh temporary data directory, so
 * {@link #pause()} can freeze it with SIGSTOP the way a stalled host freezes (an in-process server
 * cannot be paused), and {@link #kill()} / {@link #restart()} behave like a crash and a restart:
 * nodes and sessions survive, sessions time out as usual. The process dies with the test JVM.
 *
 * <p>The tick time is small (100 ms by default) so sessions of a second or two are negotiable;
 * the server accepts session timeouts from two ticks up to two minutes. All four-letter words are
 * enabled ({@link #fourLetterWord(String)}); the admin HTTP server is off. Readiness is judged on
 * {@code srvr}, not {@code ruok}, which a server answers before it serves.
 */
public final class ZooKeeperServer implements AutoCloseable {

    static final Duration DEFAULT_TICK = Duration.ofMillis(100);
    static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    static final Duration MAX_SESSION_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration FOUR_LETTER_TIMEOUT = Duration.ofSeconds(3);
    private static final int LAUNCH_ATTEMPTS = 3;

    private final ZooKeeperProcess process;
    private final Duration tickTime;

    ZooKeeperServer(ZooKeeperProcess process, Duration tickTime) {
        this.process = process;
        this.tickTime = tickTime;
    }

    /** Starts a standalone server with default options and waits until it serves. */
    public static ZooKeeperServer start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    public String host() {
        return process.host();
    }

    /** The client port; it stays the same across {@link #restart()}. */
    public int port() {
        return process.clientPort();
    }

    /** {@code 127.0.0.1:port}, as ZooKeeper clients take it. */
    public String connectString() {
        return host() + ":" + port();
    }

    /** {@code zookeeper://127.0.0.1:port}, as Warden's {@code warden.lock.endpoints} takes it. */
    public String endpoint() {
        return "zookeeper://" + connectString();
    }

    /** The server's tick time: sessions may last from two ticks. */
    public Duration tickTime() {
        return tickTime;
    }

    /**
     * {@code standalone}, {@code leader} or {@code follower} from {@code srvr}; empty while it is
     * paused, down, or not serving (an ensemble member without a quorum).
     */
    public Optional<String> mode() {
        return process.mode();
    }

    /** Whether {@code srvr} reports {@code Mode: leader}. */
    public boolean isLeader() {
        return mode().filter("leader"::equals).isPresent();
    }

    /**
     * Sends a four-letter word ({@code srvr}, {@code stat}, {@code mntr}, {@code cons}, {@code dump}, ...)
     * and returns the reply.
     *
     * @throws java.io.UncheckedIOException when the server does not answer within 3 s
     */
    public String fourLetterWord(String word) {
        return FourLetterWords.send(host(), port(), word, FOUR_LETTER_TIMEOUT);
    }

    /** {@code true} while the JVM exists, including while paused. */
    public boolean isRunning() {
        return process.isRunning();
    }

    /** {@code true} between {@link #pause()} and {@link #resume()}. */
    public boolean isPaused() {
        return process.isPaused();
    }

    /**
     * Freezes the server (SIGSTOP): connections stay open, nothing answers, clients time out and
     * sessions are not expired by this server until it resumes.
     */
    public void pause() {
        process.pause();
    }

    /** Thaws a paused server (SIGCONT). */
    public void resume() {
        process.resume();
    }

    /** Kills the server (SIGKILL) and waits until it is gone. */
    public void kill() {
        process.kill();
    }

    /**
     * Starts the server again on the same ports and data directory (a running server is killed
     * first) and waits until it serves; an ensemble member needs a quorum for that.
     */
    public void restart() {
        process.kill();
        process.launch();
        process.awaitServing(START_TIMEOUT);
    }

    /** Stops the server and deletes its directory; idempotent. */
    public void stop() {
        process.stop();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /** Waits until the server serves requests. */
    void awaitServing(Duration timeout) {
        process.awaitServing(timeout);
    }

    ZooKeeperProcess process() {
        return process;
    }

    @Override
    public String toString() {
        return "ZooKeeperServer[" + connectString() + "]";
    }

    /** The {@code zoo.cfg} lines every server gets. */
    static List<String> commonConfig(Duration tickTime, int clientPort) {
        long tick = tickTime.toMillis();
        return new ArrayList<>(List.of(
                "tickTime=" + tick,
                "clientPort=" + clientPort,
                "clientPortAddress=127.0.0.1",
                "maxClientCnxns=0",
                "minSessionTimeout=" + 2 * tick,
                "maxSessionTimeout=" + Math.max(20 * tick, MAX_SESSION_TIMEOUT.toMillis()),
                "4lw.commands.whitelist=*",
                "admin.enableServer=false",
                "autopurge.purgeInterval=0"));
    }

    static Duration checkTick(Duration tickTime) {
        Objects.requireNonNull(tickTime, "tickTime");
        if (tickTime.toMillis() < 10 || tickTime.toMillis() > 2_000) {
            throw new IllegalArgumentException("tick time must be 10 ms .. 2 s, was " + tickTime);
        }
        return tickTime;
    }

    /** Options of a standalone server. */
    public static final class Builder {

        private Duration tickTime = DEFAULT_TICK;
        private Duration containerCheckInterval;

        private Builder() {
        }

        /**
         * How often the server deletes emptied container nodes ({@code znode.container.checkIntervalMs},
         * 60 s by default): a short interval makes the race between a client creating a child and the
         * server reaping its parent frequent enough to test.
         */
        public Builder containerCheckInterval(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.toMillis() < 1) {
                throw new IllegalArgumentException("container check interval must be at least 1 ms, was " + interval);
            }
            this.containerCheckInterval = interval;
            return this;
        }

        /** The tick time (default 100 ms); session timeouts from two ticks are accepted. */
        public Builder tickTime(Duration tickTime) {
            this.tickTime = checkTick(tickTime);
            return this;
        }

        /** Launches the server on a free port and waits until it serves. */
        public ZooKeeperServer start() {
            for (int attempt = 1; ; attempt++) {
                int port = FreePorts.find();
                List<String> properties = containerCheckInterval == null ? List.of()
                        : List.of("znode.container.checkIntervalMs=" + containerCheckInterval.toMillis());
                ZooKeeperProcess process = new ZooKeeperProcess(ZooKeeperProcess.createTempDir(), 0, port,
                        commonConfig(tickTime, port), properties);
                try {
                    process.launch();
                    process.awaitServing(START_TIMEOUT);
                    return new ZooKeeperServer(process, tickTime);
                } catch (RuntimeException e) {
                    boolean portTaken = process.portWasTaken();
                    process.stop();
                    if (!portTaken || attempt == LAUNCH_ATTEMPTS) {
                        throw e;
                    }
                }
            }
        }
    }
}
