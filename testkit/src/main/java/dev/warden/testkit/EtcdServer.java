package dev.warden.testkit;

import dev.warden.testkit.internal.EtcdProcess;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * A real single-member etcd for an integration test, launched from the local {@code etcd} binary
 * (Debian/Ubuntu: {@code apt-get install -y etcd-server}) on a free loopback port, with pause,
 * resume, kill and restart; or the cluster named by {@code WARDEN_ETCD_ENDPOINTS}, without fault
 * controls. See {@link EtcdCluster} for the details, which apply here too.
 *
 * <p>{@link #builder()} adds TLS on the client URL (from a {@link TlsMaterial}: the server's
 * certificate for 127.0.0.1 and localhost, client certificates required by default) and
 * authentication (a root user, then {@link #addUser} for users limited to a key prefix), with a
 * short simple-token TTL if asked. testkit's own calls ({@link #keys}, health checks) then use the
 * material's client certificate and the root user.
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

    /** A server with TLS or authentication. */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of a server to start; each returns this builder. */
    public static final class Builder {
        private TlsMaterial tls;
        private boolean clientCertAuth = true;
        private String rootPassword;
        private Duration authTokenTtl;

        private Builder() {
        }

        /** Serves clients over TLS ({@code https://}, Warden's {@code etcds://}) with this material's server certificate. */
        public Builder tls(TlsMaterial material) {
            this.tls = material;
            return this;
        }

        /** Whether clients must present a certificate the material's CA signed ({@code --client-cert-auth}); true by default. */
        public Builder clientCertAuth(boolean required) {
            this.clientCertAuth = required;
            return this;
        }

        /** Turns authentication on, with a {@code root} user (role root) of this password. */
        public Builder auth(String rootPassword) {
            this.rootPassword = rootPassword;
            return this;
        }

        /** The TTL of simple auth tokens ({@code --auth-token-ttl}, whole seconds, at least 1). */
        public Builder authTokenTtl(Duration ttl) {
            if (ttl.toSeconds() < 1) {
                throw new IllegalArgumentException("etcd's auth token TTL is whole seconds, at least 1: " + ttl);
            }
            this.authTokenTtl = ttl;
            return this;
        }

        /** Starts the server and waits until it reports healthy (and authentication is on, if asked). */
        public EtcdServer start() {
            EtcdProcess.Options options = new EtcdProcess.Options(
                    tls == null ? null : tls.caCertificate(), tls == null ? null : tls.serverCertificate(),
                    tls == null ? null : tls.serverKey(), tls != null && clientCertAuth,
                    tls == null ? null : tls.trustStore(), tls == null ? null : tls.clientKeyStore(), TlsMaterial.STORE_PASSWORD,
                    authTokenTtl == null ? 0 : (int) authTokenTtl.toSeconds());
            return new EtcdServer(EtcdCluster.start(1, System::getenv, options, rootPassword));
        }
    }

    /**
     * Adds a user with a role (of the same name) that may read and write every key starting with
     * {@code prefix} and nothing else; authentication must be on.
     */
    public void addUser(String user, String password, String prefix) {
        cluster.addUser(user, password, prefix);
    }

    /**
     * One call to etcd's JSON gateway ({@code path} such as {@code /v3/kv/range}, {@code json} its
     * body, keys base64) with {@code token} instead of root's: the answer's body, or an
     * {@link java.io.UncheckedIOException} whose message carries the server's refusal.
     */
    public String requestAs(String token, String path, String json) {
        return dev.warden.testkit.internal.EtcdHttp.postAs(clientUrls().get(0), path, json, Duration.ofSeconds(3), token);
    }

    /** A token for {@code user} (from etcd's {@code /v3/auth/authenticate}). */
    public String authenticate(String user, String password) {
        return cluster.authenticate(user, password);
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

    /** Warden's endpoints setting: {@code etcd://127.0.0.1:port} ({@code etcds://} over TLS). */
    public String endpoints() {
        return cluster.endpoints();
    }

    /** Client URLs, {@code http://host:port} ({@code https://} over TLS). */
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
