package dev.warden.spring.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code warden.lock.*}: the auto-configured {@code LockClient}. Values are handed to Warden as written and
 * parsed there, so a mistake fails the start-up with Warden's one configuration message (a
 * {@code LockException} with reason {@code CONFIGURATION}) listing every problem. Durations are written
 * {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT30S}).
 */
@ConfigurationProperties("warden.lock")
public class WardenLockProperties {

    /** Whether to create the LockClient bean. */
    private boolean enabled = true;

    /** The lock backend: redis, etcd or zookeeper; its module (lock-redis, ...) must be on the class path. */
    private String backend;

    /**
     * The backend's endpoints, as URIs: redis://host:6379, etcd://h1:2379,etcd://h2:2379,
     * zookeeper://h1:2181,zookeeper://h2:2181.
     */
    private List<String> endpoints = new ArrayList<>();

    /** Prefix of every lock key or path (default warden). */
    private String namespace;

    /** Lease time to live, renewed every third of it while held (default 30s; etcd: whole seconds). */
    private String ttl;

    /** How long connecting may take (default 5s). */
    private String connectTimeout;

    /** Deadline of every server call (default 5s). */
    private String requestTimeout;

    private final ZooKeeper zookeeper = new ZooKeeper();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getBackend() {
        return backend;
    }

    public void setBackend(String backend) {
        this.backend = backend;
    }

    public List<String> getEndpoints() {
        return endpoints;
    }

    public void setEndpoints(List<String> endpoints) {
        this.endpoints = endpoints;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getTtl() {
        return ttl;
    }

    public void setTtl(String ttl) {
        this.ttl = ttl;
    }

    public String getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(String connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public String getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(String requestTimeout) {
        this.requestTimeout = requestTimeout;
    }

    public ZooKeeper getZookeeper() {
        return zookeeper;
    }

    /** Options of the ZooKeeper backend. */
    public static class ZooKeeper {

        /**
         * When leases end: suspended (a suspended connection ends every lease, the default) or lost (only a
         * lost session does).
         */
        private String lostOn;

        public String getLostOn() {
            return lostOn;
        }

        public void setLostOn(String lostOn) {
            this.lostOn = lostOn;
        }
    }
}
