package dev.warden.spring.autoconfigure;

import dev.warden.micrometer.LockNameTag;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code warden.metrics.*}: Warden's meters, registered when the application has a {@code MeterRegistry}. */
@ConfigurationProperties("warden.metrics")
public class WardenMetricsProperties {

    /** Whether to meter the lock client, the quota service and the ledger. */
    private boolean enabled = true;

    /**
     * Whether lock meters carry the lock name as a tag (lock=merchant:42). Off by default: a tag per name
     * is a time series per name. Turn it on only for a few fixed names.
     */
    private boolean lockNameTag = false;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isLockNameTag() {
        return lockNameTag;
    }

    public void setLockNameTag(boolean lockNameTag) {
        this.lockNameTag = lockNameTag;
    }

    LockNameTag lockNames() {
        return lockNameTag ? LockNameTag.INCLUDE : LockNameTag.OMIT;
    }
}
