package dev.warden.spring.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.time.Duration;
import java.util.Optional;

/**
 * Up when the backend answers a probe acquisition: it grants the probe lock (released at once), or says
 * within {@link #PROBE_WAIT} that another holds it; down when the acquisition fails (the backend cannot
 * be reached within the request timeout). The probe's name is fixed, so its keys do not pile up (Redis
 * keeps one fence counter per name); it is "held elsewhere" while another instance probes, or for one TTL
 * after a probe that timed out during an outage reached the server late.
 */
public final class LockHealthIndicator extends AbstractHealthIndicator {

    static final String PROBE = "warden-health-probe";
    static final Duration PROBE_WAIT = Duration.ofSeconds(1);

    private final LockClient locks;

    public LockHealthIndicator(LockClient locks) {
        super("the lock backend could not be reached");
        this.locks = locks;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("backend", locks.backend());
        long start = System.nanoTime();
        Optional<Lease> lease = locks.lock(PROBE).tryAcquire(PROBE_WAIT);
        if (lease.isEmpty()) {
            // A timed acquisition that cannot reach the server fails; an empty answer came from the server.
            builder.up().withDetail("probe", "held elsewhere");
            return;
        }
        long token = lease.get().fencingToken();
        lease.get().release();
        builder.up()
                .withDetail("probeFencingToken", token)
                .withDetail("probeMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
    }
}
