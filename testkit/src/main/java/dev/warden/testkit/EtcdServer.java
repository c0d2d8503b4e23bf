package dev.warden.testkit;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * A real single-member etcd for an integration test, launched from the local {@code etcd} binary
 * (Debian/Ubuntu: {@code apt-get install -y etcd-server}) on a free loopback port, with pause,
 * resume, kill and restart; or the cluster named by {@code WARDEN_ETCD_ENDPOINTS}, without fault
 * controls. See {@link EtcdCluster} for the details, which apply here too.
 */
public final class EtcdServer implements AutoCloseable {

    private final EtcdCluster cluster;

    private EtcdServer(EtcdCluster cluster) {
        this.cluster = cluster;
    }

    /** Starts the server and waits until it reports healthy. */
    public static EtcdServer start() {
        return new EtcdServer(EtcdCluster.start(1));
    }

    static EtcdServer start(Function<String, String> env) {
        return new EtcdServer(EtcdCluster.start(1, env));
    }

    /** Whether testkit launched it (false for {@code WARDEN_ETCD_ENDPOINTS}). */
    public boolean isManaged() {
        return cluster.isManaged();
    }

    /** The member, for fault controls. */
    public EtcdMember member() {
        return cluster.only().orElseThrow(() -> new UnsupportedOperationException(
                "a WARDEN_ETCD_ENDPOINTS server has no member testkit controls"));
    }

    /** The host clients connect to. */
    public String host() {
        return member().host();
    }

    /** The client port. */
    public int port() {
        return member().port();
    }

    /** Warden's endpoints setting: {@code etcd://127.0.0.1:port}. */
    public String endpoints() {
        return cluster.endpoints();
    }

    /** Client URLs, {@code http://host:port}. */
    public List<String> clientUrls() {
        return cluster.clientUrls();
    }

    public boolean isRunning() {
        return member().isRunning();
    }

    public boolean isPaused() {
        return isManaged() && member().isPaused();
    }

    /** Freezes the server (SIGSTOP). */
    public void pause() {
        member().pause();
    }

    /** Thaws it (SIGCONT). */
    public void resume() {
        member().resume();
    }

    /** Kills it (SIGKILL). */
    public void kill() {
        member().kill();
    }

    /** Starts it again with its data and waits until healthy. */
    public void restart() {
        member().restart();
    }

    /** Resumes a paused server and restarts a killed one. */
    public void heal() {
        cluster.heal();
    }

    /** Keys (UTF-8) starting with {@code prefix}. */
    public List<String> keys(String prefix) {
        return cluster.keys(prefix);
    }

    /** How many keys start with {@code prefix}. */
    public long count(String prefix) {
        return cluster.count(prefix);
    }

    /** Puts one key (both UTF-8). */
    public void put(String key, String value) {
        cluster.put(key, value);
    }

    /** Deletes one key; returns whether it existed. */
    public boolean delete(String key) {
        return cluster.delete(key);
    }

    /** Deletes every key starting with {@code prefix}. */
    public long deletePrefix(String prefix) {
        return cluster.deletePrefix(prefix);
    }

    /** Waits until the server answers healthy again. */
    public void awaitHealthy(Duration timeout) {
        cluster.awaitLeader(timeout);
    }

    /** Stops the server and deletes its directory; idempotent. */
    @Override
    public void close() {
        cluster.close();
    }

    @Override
    public String toString() {
        return "EtcdServer[" + endpoints() + "]";
    }
}
