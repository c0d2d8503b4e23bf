package dev.warden.spring.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Up when the quota engine's Redis answers a balance read (one {@code EVALSHA}: the server and the loaded
 * scripts) of a probe account. A probe partition without its marker is reported, not DOWN: it means
 * Redis lost its data, or only that no account was opened in that partition yet.
 */
public final class QuotaHealthIndicator extends AbstractHealthIndicator {

    static final String PROBE_ACCOUNT = "warden-health-probe";

    private final QuotaService quota;

    public QuotaHealthIndicator(QuotaService quota) {
        super("the quota engine's Redis could not be reached");
        this.quota = quota;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("service", quota.toString());
        long start = System.nanoTime();
        try {
            quota.balance(PROBE_ACCOUNT);
        } catch (QuotaException e) {
            if (e.reason() != QuotaException.Reason.DATA_LOST) {
                throw e;
            }
            builder.withDetail("probePartition", "no marker: Redis lost its data, or no account was opened in it yet");
        }
        builder.up().withDetail("probeMillis", (System.nanoTime() - start) / 1_000_000);
    }
}
