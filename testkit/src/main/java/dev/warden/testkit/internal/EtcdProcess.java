package dev.warden.testkit.internal;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * One {@code etcd} member as a child process on loopback ports, with its own data directory that
 * survives {@link #kill()} and {@link #relaunch()}: a restarted member rejoins its cluster with its
 * data (the initial-cluster flags are ignored once the directory holds a member).
 */
public final class EtcdProcess {

    public static final String HOST = "127.0.0.1";
    private static final Duration HEALTH_TIMEOUT = Duration.ofMillis(500);
    private static final int LOG_TAIL_LINES = 30;

    private final Path binary;
    private final String name;
    private final int clientPort;
    private final int peerPort;
    private final Path dir;
    private final ServerProcess server;
    private final Options options;
    private List<String> command;
    private boolean stopped;

    /**
     * How a member serves clients: TLS on its client URL ({@code https://}, the server certificate
     * and key in PEM, the CA that signs client certificates, whether one is required), and the TTL
     * of its simple auth tokens. Peers always talk plain HTTP on loopback.
     *
     * @param caCertificate PEM CA for {@code --trusted-ca-file}; null for plain-text clients
     * @param serverCertificate PEM chain for {@code --cert-file}
     * @param serverKey PEM key for {@code --key-file}
     * @param clientCertAuth {@code --client-cert-auth}
     * @param trustStore PKCS12 trust store testkit's own calls trust
     * @param clientKeyStore PKCS12 client key store testkit's own calls present
     * @param storePassword the stores' password
     * @param authTokenTtlSeconds {@code --auth-token-ttl}; 0 for etcd's default (300 s)
     */
    public record Options(Path caCertificate, Path serverCertificate, Path serverKey, boolean clientCertAuth,
                          Path trustStore, Path clientKeyStore, String storePassword, int authTokenTtlSeconds) {

        public static final Options PLAIN = new Options(null, null, null, false, null, null, null, 0);

        boolean tls() {
            return caCertificate != null;
        }
    }

    /** A member not started yet; {@link #initialCluster} must be called before {@link #launch()}. */
    public EtcdProcess(Path binary, String name) {
        this(binary, name, Options.PLAIN);
    }

    /** A member serving clients as {@code options} say. */
    public EtcdProcess(Path binary, String name, Options options) {
        this.binary = binary;
        this.name = name;
        this.options = options;
        this.clientPort = FreePorts.find();
        int peer = FreePorts.find();
        while (peer == clientPort) {
            peer = FreePorts.find();
        }
        this.peerPort = peer;
        this.dir = createTempDir();
        this.server = new ServerProcess(dir, this::label, ServerProcess.Reach.PROCESS);
        if (options.tls()) {
            EtcdHttp.register(clientUrl(), new EtcdHttp.Access(EtcdHttp.sslContext(options.trustStore(),
                    options.clientCertAuth() ? options.clientKeyStore() : null, options.storePassword())));
        }
    }

    /**
     * The binary named by {@code WARDEN_ETCD}, else {@code etcd} on {@code PATH}.
     *
     * @throws IllegalStateException if {@code WARDEN_ETCD} names something that is not executable
     */
    public static Optional<Path> findBinary(Function<String, String> env) {
        String explicit = env.apply("WARDEN_ETCD");
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit);
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException("WARDEN_ETCD=" + explicit + " is not an executable file");
            }
            return Optional.of(path);
        }
        String searchPath = env.apply("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        return Stream.of(searchPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, "etcd"))
                .filter(candidate -> Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                .findFirst();
    }

    public String name() {
        return name;
    }

    public int clientPort() {
        return clientPort;
    }

    /** {@code http://127.0.0.1:port}, or {@code https://} when the member serves TLS. */
    public String clientUrl() {
        return (options.tls() ? "https://" : "http://") + HOST + ":" + clientPort;
    }

    public String peerUrl() {
        return "http://" + HOST + ":" + peerPort;
    }

    /** Sets the cluster this member bootstraps into: {@code name=peerUrl,...} for every member. */
    public synchronized void initialCluster(String initialCluster, String token) {
        List<String> c = new ArrayList<>(List.of(binary.toString(),
                "--name", name,
                "--data-dir", dir.resolve("data").toString(),
                "--listen-client-urls", clientUrl(),
                "--advertise-client-urls", clientUrl(),
                "--listen-peer-urls", peerUrl(),
                "--initial-advertise-peer-urls", peerUrl(),
                "--initial-cluster", initialCluster,
                "--initial-cluster-token", token,
                "--initial-cluster-state", "new",
                "--logger", "zap",
                "--log-outputs", "stderr"));
        if (options.tls()) {
            c.addAll(List.of("--cert-file", options.serverCertificate().toString(),
                    "--key-file", options.serverKey().toString(),
                    "--trusted-ca-file", options.caCertificate().toString()));
            if (options.clientCertAuth()) {
                c.add("--client-cert-auth");
            }
        }
        if (options.authTokenTtlSeconds() > 0) {
            c.addAll(List.of("--auth-token", "simple", "--auth-token-ttl", Integer.toString(options.authTokenTtlSeconds())));
        }
        command = List.copyOf(c);
    }

    /** Starts the process without waiting: members of a cluster only turn healthy together. */
    public synchronized void launch() {
        if (command == null) {
            throw new IllegalStateException("initialCluster() was not called for etcd member " + name);
        }
        server.launch(command, log(), binary.toString());
    }

    /** Waits until {@code /health} answers true (up, with a leader); fails with the log tail. */
    public void awaitHealthy(Duration timeout) {
        Process started = server.current();
        boolean healthy = Wait.until(timeout,
                () -> !started.isAlive() || EtcdHttp.healthy(clientUrl(), HEALTH_TIMEOUT));
        if (!started.isAlive()) {
            throw new IllegalStateException("etcd member " + name + " (client port " + clientPort + ") exited with code "
                    + started.exitValue() + "; log tail:\n" + logTail());
        }
        if (!healthy) {
            throw new IllegalStateException("etcd member " + name + " (client port " + clientPort
                    + ") did not report healthy within " + timeout.toSeconds() + " s; log tail:\n" + logTail());
        }
    }

    public boolean isRunning() {
        return server.isRunning();
    }

    public synchronized boolean isPaused() {
        return server.isPaused();
    }

    public synchronized void pause() {
        requireRunning("pause");
        server.pause();
    }

    public synchronized void resume() {
        requireRunning("resume");
        server.resume();
    }

    /** SIGKILL, and waits until the process is gone. */
    public synchronized void kill() {
        requireNotStopped("kill");
        server.kill();
    }

    /** Starts again on the same ports and data directory (a running member is stopped first); does not wait. */
    public synchronized void relaunch() {
        requireNotStopped("restart");
        server.shutDown(Process::destroy, ServerProcess.EXIT_TIMEOUT);
        launch();
    }

    /** Stops the process (resuming it first if paused) and deletes its directory; idempotent. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        server.shutDown(Process::destroy, ServerProcess.EXIT_TIMEOUT);
        server.deleteDirectory();
        EtcdHttp.unregister(clientUrl());
    }

    public String logTail() {
        String tail = ServerProcess.tail(log(), LOG_TAIL_LINES);
        // EtcdMember.logTail() hands it out as the lines without a final newline.
        return tail.endsWith("\n") ? tail.substring(0, tail.length() - 1) : tail;
    }

    private void requireRunning(String action) {
        requireNotStopped(action);
        if (!server.isRunning()) {
            throw new IllegalStateException("cannot " + action + " " + label()
                    + ": it is not running (killed? call restart())");
        }
    }

    private void requireNotStopped(String action) {
        if (stopped) {
            throw new IllegalStateException("cannot " + action + " " + label() + ": it was stopped");
        }
    }

    private String label() {
        return "etcd member " + name;
    }

    private Path log() {
        return dir.resolve("etcd.log");
    }

    /** In RAM when {@code /dev/shm} is there: etcd fsyncs every write, and the tests measure locks, not disks. */
    private static Path createTempDir() {
        Path shm = Path.of("/dev/shm");
        boolean inRam = Files.isDirectory(shm) && Files.isWritable(shm);
        return ServerProcess.createTempDir(inRam ? shm : null, "warden-etcd-", "etcd");
    }

    /** Every member's {@code name=peerUrl}, for {@link #initialCluster}. */
    public static String initialClusterOf(List<EtcdProcess> members) {
        List<String> parts = new ArrayList<>();
        for (EtcdProcess m : members) {
            parts.add(m.name() + "=" + m.peerUrl());
        }
        return String.join(",", parts);
    }
}
