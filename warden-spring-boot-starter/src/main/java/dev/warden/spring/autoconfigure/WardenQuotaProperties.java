package dev.warden.spring.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code warden.quota.*}: the auto-configured {@code QuotaService}. Values are handed to Warden as written
 * and parsed there, so a mistake fails the start-up with Warden's one configuration message (a
 * {@code QuotaException} with reason {@code CONFIGURATION}). With a lock ({@code warden.quota.lock}), the
 * service takes its charges' locks with the {@code warden.lock.*} settings.
 */
@ConfigurationProperties("warden.quota")
public class WardenQuotaProperties {

    /** Whether to create the QuotaService bean. */
    private boolean enabled = true;

    /** The Redis holding the accounts: redis://host:6379[/db] or rediss://. Redis 7 or later. */
    private String endpoint;

    /** Prefix of every quota key, for tenants sharing one Redis (default none). */
    private String namespace;

    /** Partition count, 1..16384, fixed for the life of the data (default 16). */
    private String partitions;

    /** How long a request id is remembered for idempotency (default 24h). */
    private String idempotencyRetention;

    /** Deadline of every server call (default 5s). */
    private String requestTimeout;

    /** How long connecting may take (default 5s). */
    private String connectTimeout;

    /** Whether a Redis whose maxmemory-policy can evict quota keys is accepted with a warning (default false). */
    private String allowEviction;

    /** The lock a charge takes: none (default), redis, etcd or zookeeper. */
    private String lock;

    /** How long a charge waits for its lock (default 10s). */
    private String lockWait;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getEndpoint() {
        return endpoint;
    }

    public void setEndpoint(String endpoint) {
        this.endpoint = endpoint;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getPartitions() {
        return partitions;
    }

    public void setPartitions(String partitions) {
        this.partitions = partitions;
    }

    public String getIdempotencyRetention() {
        return idempotencyRetention;
    }

    public void setIdempotencyRetention(String idempotencyRetention) {
        this.idempotencyRetention = idempotencyRetention;
    }

    public String getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(String requestTimeout) {
        this.requestTimeout = requestTimeout;
    }

    public String getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(String connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public String getAllowEviction() {
        return allowEviction;
    }

    public void setAllowEviction(String allowEviction) {
        this.allowEviction = allowEviction;
    }

    public String getLock() {
        return lock;
    }

    public void setLock(String lock) {
        this.lock = lock;
    }

    public String getLockWait() {
        return lockWait;
    }

    public void setLockWait(String lockWait) {
        this.lockWait = lockWait;
    }
}
