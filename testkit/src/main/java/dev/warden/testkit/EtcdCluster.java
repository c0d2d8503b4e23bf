package dev.warden.testkit;

import dev.warden.testkit.internal.EtcdHttp;
import dev.warden.testkit.internal.EtcdProcess;
import dev.warden.testkit.internal.Wait;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A real etcd cluster for an integration test: {@code n} members of the local {@code etcd} binary
 * (Debian/Ubuntu package {@code etcd-server}) on free loopback ports, each in its own temporary
 * directory (in RAM under {@code /dev/shm} where there is one), each with pause, resume, kill and
 * restart. The processes die with the JVM.
 *
 * <p>{@code WARDEN_ETCD_ENDPOINTS} (comma-separated {@code http://host:port} or
 * {@code etcd://host:port}) uses a running cluster instead; it has no members to control, so fault
 * controls throw {@link UnsupportedOperationException}. Without it, a missing binary is an
 * {@link IllegalStateException} that says how to install etcd, never a skipped test.
 *
 * <p>{@link #keys}, {@link #count}, {@link #delete} and {@link #deletePrefix} read and write the
 * cluster directly over the v3 JSON gateway of the first member that answers, so assertions do not
 * depend on the client under test.
 */
public final class EtcdCluster implements AutoCloseable {

    static final String NOT_FOUND = "etcd not found on PATH: install it: apt-get install -y etcd-server"
            + " (or set WARDEN_ETCD to the binary, or WARDEN_ETCD_ENDPOINTS to a running cluster)";
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(3);

    private final List<EtcdMember> members;
    private final List<String> externalUrls;

    private EtcdCluster(List<EtcdMember> members, List<String> externalUrls) {
        this.members = List.copyOf(members);
        this.externalUrls = List.copyOf(externalUrls);
    }

    /** Starts a cluster of {@code size} members and waits until every member is healthy. */
    public static EtcdCluster start(int size) {
        return start(size, System::getenv);
    }

    static EtcdCluster start(int size, Function<String, String> env) {
        return start(size, env, EtcdProcess.Options.PLAIN, null);
    }

    /**
     * Starts a cluster whose members serve clients as {@code options} say, with authentication on
     * (a root user with {@code rootPassword}) unless that is null.
     */
    static EtcdCluster start(int size, Function<String, String> env, EtcdProcess.Options options, String rootPassword) {
        if (size < 1) {
            throw new IllegalArgumentException("a cluster needs at least one member, got " + size);
        }
        String external = env.apply("WARDEN_ETCD_ENDPOINTS");
        if (external != null && !external.isBlank()) {
            List<String> urls = Arrays.stream(external.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(s -> s.startsWith("etcd://") ? "http://" + s.substring("etcd://".length()) : s)
                    .collect(Collectors.toList());
            return new EtcdCluster(List.of(), urls);
        }
        Path binary = EtcdProcess.findBinary(env).orElseThrow(() -> new IllegalStateException(NOT_FOUND));
        // A port found free can be taken by another process before etcd binds it: start again on new ports.
        for (int attempt = 1; ; attempt++) {
            try {
                return launch(binary, size, options, rootPassword);
            } catch (IllegalStateException e) {
                if (attempt == 3 || e.getMessage() == null || !e.getMessage().contains("address already in use")) {
                    throw e;
                }
            }
        }
    }

    private static EtcdCluster launch(Path binary, int size, EtcdProcess.Options options, String rootPassword) {
        List<EtcdProcess> processes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            processes.add(new EtcdProcess(binary, "m" + i, options));
        }
        String initial = EtcdProcess.initialClusterOf(processes);
        String token = "warden-" + UUID.randomUUID().toString().substring(0, 8);
        List<EtcdMember> members = new ArrayList<>();
        for (EtcdProcess p : processes) {
            p.initialCluster(initial, token);
            members.add(new EtcdMember(p));
        }
        EtcdCluster cluster = new EtcdCluster(members, List.of());
        try {
            members.forEach(EtcdMember::launch);
            members.forEach(EtcdMember::awaitHealthy);
            if (rootPassword != null) {
                EtcdHttp.enableAuth(members.get(0).clientUrl(), rootPassword, CALL_TIMEOUT);
                // Every member's calls authenticate as root from now on (tokens are per member).
                for (EtcdMember m : members.subList(1, members.size())) {
                    EtcdHttp.rootAccess(m.clientUrl(), rootPassword);
                }
            }
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The members testkit launched; empty for a {@code WARDEN_ETCD_ENDPOINTS} cluster. */
    public List<EtcdMember> members() {
        return members;
    }

    /** One member. */
    public EtcdMember member(int index) {
        requireManaged("member");
        return members.get(index);
    }

    /** Whether testkit launched the members (false for {@code WARDEN_ETCD_ENDPOINTS}). */
    public boolean isManaged() {
        return !members.isEmpty();
    }

    /** Client URLs, {@code http://host:port}. */
    public List<String> clientUrls() {
        if (!isManaged()) {
            return externalUrls;
        }
        return members.stream().map(EtcdMember::clientUrl).collect(Collectors.toList());
    }

    /** Warden's endpoints setting for every member: {@code etcd://h:p,etcd://h:p,...} ({@code etcds://} over TLS). */
    public String endpoints() {
        return clientUrls().stream().map(u -> (u.startsWith("https:") ? "etcds://" : "etcd://") + u.substring(u.indexOf("://") + 3))
                .collect(Collectors.joining(","));
    }

    /** The current leader, waiting up to {@code timeout} for one to be elected. */
    public EtcdMember awaitLeader(Duration timeout) {
        requireManaged("awaitLeader");
        EtcdMember[] found = new EtcdMember[1];
        boolean elected = Wait.until(timeout, () -> {
            for (EtcdMember m : members) {
                if (m.isLeader()) {
                    found[0] = m;
                    return true;
                }
            }
            return false;
        });
        if (!elected) {
            throw new IllegalStateException("no etcd leader within " + timeout + " among " + members);
        }
        return found[0];
    }

    /** Members other than {@code member}. */
    public List<EtcdMember> others(EtcdMember member) {
        return members.stream().filter(m -> m != member).collect(Collectors.toList());
    }

    /** Pauses every member (SIGSTOP). */
    public void pauseAll() {
        requireManaged("pause");
        members.stream().filter(EtcdMember::isRunning).filter(m -> !m.isPaused()).forEach(EtcdMember::pause);
    }

    /** Resumes every paused member. */
    public void resumeAll() {
        requireManaged("resume");
        members.stream().filter(EtcdMember::isPaused).forEach(EtcdMember::resume);
    }

    /** Whether any member is paused. */
    public boolean isAnyPaused() {
        return members.stream().anyMatch(EtcdMember::isPaused);
    }

    /** Resumes paused members and restarts killed ones, waiting until all are healthy. */
    public void heal() {
        if (!isManaged()) {
            return;
        }
        resumeAll();
        for (EtcdMember m : members) {
            if (!m.isRunning()) {
                m.restart();
            }
        }
        members.forEach(EtcdMember::awaitHealthy);
    }

    /**
     * Adds an etcd user with a role of the same name that may read and write every key starting
     * with {@code prefix} and nothing else (authentication must be on).
     */
    public void addUser(String user, String password, String prefix) {
        onAnyMember(url -> {
            EtcdHttp.addUser(url, user, password, prefix, CALL_TIMEOUT);
            return null;
        });
    }

    /** A token for {@code user}, from the first member that answers. */
    public String authenticate(String user, String password) {
        return onAnyMember(url -> EtcdHttp.authenticate(url, user, password, CALL_TIMEOUT));
    }

    /** Keys (UTF-8) starting with {@code prefix}; a linearizable read. */
    public List<String> keys(String prefix) {
        return onAnyMember(url -> EtcdHttp.keys(url, prefix, CALL_TIMEOUT));
    }

    /** How many keys start with {@code prefix}; a linearizable read. */
    public long count(String prefix) {
        return onAnyMember(url -> EtcdHttp.count(url, prefix, CALL_TIMEOUT));
    }

    /** Puts one key (both UTF-8). */
    public void put(String key, String value) {
        onAnyMember(url -> {
            EtcdHttp.put(url, key, value, CALL_TIMEOUT);
            return null;
        });
    }

    /** Deletes one key; returns whether it existed. */
    public boolean delete(String key) {
        return onAnyMember(url -> EtcdHttp.delete(url, key, CALL_TIMEOUT));
    }

    /** Deletes every key starting with {@code prefix}; returns how many went. */
    public long deletePrefix(String prefix) {
        return onAnyMember(url -> EtcdHttp.deletePrefix(url, prefix, CALL_TIMEOUT));
    }

    private <T> T onAnyMember(Function<String, T> call) {
        UncheckedIOException last = null;
        for (String url : reachableFirst()) {
            try {
                return call.apply(url);
            } catch (UncheckedIOException e) {
                last = e;
            }
        }
        throw Objects.requireNonNull(last, "no etcd member to call");
    }

    private List<String> reachableFirst() {
        if (!isManaged()) {
            return externalUrls;
        }
        return members.stream().filter(m -> m.isRunning() && !m.isPaused()).map(EtcdMember::clientUrl)
                .collect(Collectors.toList());
    }

    private void requireManaged(String action) {
        if (!isManaged()) {
            throw new UnsupportedOperationException("cannot " + action + " a WARDEN_ETCD_ENDPOINTS cluster: testkit"
                    + " does not manage it");
        }
    }

    /** Stops every member and deletes their directories; idempotent. */
    @Override
    public void close() {
        RuntimeException first = null;
        for (EtcdMember m : members) {
            try {
                m.stop();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "EtcdCluster[" + endpoints() + "]";
    }

    /** Optional view for single-member use. */
    Optional<EtcdMember> only() {
        return members.size() == 1 ? Optional.of(members.get(0)) : Optional.empty();
    }
}
