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

    /** The super user's name in {@link Builder#superUser(String)}. */
    public static final String SUPER_USER = "super";

    private final ZooKeeperProcess process;
    private final Duration tickTime;
    private final int securePort;

    ZooKeeperServer(ZooKeeperProcess process, Duration tickTime) {
        this(process, tickTime, 0);
    }

    ZooKeeperServer(ZooKeeperProcess process, Duration tickTime, int securePort) {
        this.process = process;
        this.tickTime = tickTime;
        this.securePort = securePort;
    }

    /**
     * ZooKeeper's digest of a user and password, {@code user:base64(sha1(user:password))}, as
     * {@code DigestAuthenticationProvider.generateDigest} computes it and as ACLs and
     * {@code zookeeper.DigestAuthenticationProvider.superDigest} name a digest user.
     */
    public static String digest(String user, String password) {
        try {
            byte[] sha1 = java.security.MessageDigest.getInstance("SHA1")
                    .digest((user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return user + ":" + java.util.Base64.getEncoder().encodeToString(sha1);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA1 in this JVM", e);
        }
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

    /**
     * The secure (TLS) client port of a server built with {@link Builder#secureClientPort}.
     *
     * @throws IllegalStateException when the server has none
     */
    public int securePort() {
        if (securePort == 0) {
            throw new IllegalStateException(this + " has no secure client port (Builder.secureClientPort)");
        }
        return securePort;
    }

    /** {@code zookeeper://127.0.0.1:securePort}, for a client configured with Warden's TLS settings. */
    public String secureEndpoint() {
        return "zookeeper://" + host() + ":" + securePort();
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

    /** The {@code zoo.cfg} lines of a secure client port: Netty, the server's key store, the CA for clients. */
    static List<String> secureConfig(TlsMaterial tls, int securePort, boolean needClientCertificate) {
        return List.of(
                "secureClientPort=" + securePort,
                "secureClientPortAddress=127.0.0.1",
                "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                "ssl.keyStore.location=" + tls.serverKeyStore(),
                "ssl.keyStore.password=" + TlsMaterial.STORE_PASSWORD,
                "ssl.keyStore.type=PKCS12",
                "ssl.trustStore.location=" + tls.trustStore(),
                "ssl.trustStore.password=" + TlsMaterial.STORE_PASSWORD,
                "ssl.trustStore.type=PKCS12",
                "ssl.clientAuth=" + (needClientCertificate ? "need" : "want"));
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
        private String superPassword;
        private TlsMaterial tls;
        private boolean needClientCertificate;

        private Builder() {
        }

        /**
         * A digest super user {@value #SUPER_USER} with this password
         * ({@code zookeeper.DigestAuthenticationProvider.superDigest}), whom no ACL refuses: for tests
         * that inspect or edit nodes other users created with creator-only ACLs.
         */
        public Builder superUser(String password) {
            this.superPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * A secure client port besides the plain one (which testkit's health checks and inspection keep
         * using): TLS with {@code tls}'s server certificate (127.0.0.1, localhost), trusting its CA for
         * client certificates, which are required ({@code ssl.clientAuth=need}) or only checked when
         * sent ({@code want}). The server then runs on Netty ({@code NettyServerCnxnFactory}), which links
         * Netty's epoll classes (io.netty:netty-transport-classes-epoll, which testkit declares); a missing
         * class fails the start, naming the artifact. It runs on this JVM's Netty (Warden's 4.2), not the
         * 4.1 ZooKeeper ships with.
         */
        public Builder secureClientPort(TlsMaterial tls, boolean needClientCertificate) {
            this.tls = Objects.requireNonNull(tls, "tls");
            this.needClientCertificate = needClientCertificate;
            return this;
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
                List<String> properties = new ArrayList<>();
                if (containerCheckInterval != null) {
                    properties.add("znode.container.checkIntervalMs=" + containerCheckInterval.toMillis());
                }
                if (superPassword != null) {
                    properties.add("zookeeper.DigestAuthenticationProvider.superDigest=" + digest(SUPER_USER, superPassword));
                }
                List<String> config = commonConfig(tickTime, port);
                int securePort = 0;
                if (tls != null) {
                    securePort = FreePorts.find();
                    config.addAll(secureConfig(tls, securePort, needClientCertificate));
                }
                ZooKeeperProcess process = new ZooKeeperProcess(ZooKeeperProcess.createTempDir(), 0, port,
                        config, properties, tls != null);
                try {
                    process.launch();
                    process.awaitServing(START_TIMEOUT);
                    return new ZooKeeperServer(process, tickTime, securePort);
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
