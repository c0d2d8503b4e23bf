package dev.warden.spring.probe;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.time.Duration;
import java.util.Optional;

/**
 * Up when the backend answers a probe acquisition: it grants the probe lock (released at once), or says
 * within {@link #PROBE_WAIT} that another holds it; the acquisition throws when the backend cannot be
 * reached within the request timeout. The probe's name is fixed, so its keys do not pile up (Redis keeps one
 * fence counter per name); it is "held elsewhere" while another instance probes, or for one TTL after a probe
 * that timed out during an outage reached the server late.
 */
public final class LockProbe {

    /** The probe lock's name. */
    public static final String PROBE = "warden-health-probe";

    /** How long the probe waits for the lock. */
    public static final Duration PROBE_WAIT = Duration.ofSeconds(1);

    /** What an indicator reports when the probe throws. */
    public static final String FAILURE = "the lock backend could not be reached";

    private LockProbe() {
    }

    /** Probes {@code locks} and writes the result to {@code report}. */
    public static void check(LockClient locks, HealthReport report) {
        report.detail("backend", locks.backend());
        long start = System.nanoTime();
        Optional<Lease> lease = locks.lock(PROBE).tryAcquire(PROBE_WAIT);
        if (lease.isEmpty()) {
            // A timed acquisition that cannot reach the server fails; an empty answer came from the server.
            report.up().detail("probe", "held elsewhere");
            return;
        }
        long token = lease.get().fencingToken();
        lease.get().release();
        report.up()
                .detail("probeFencingToken", token)
                .detail("probeMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
    }
}
