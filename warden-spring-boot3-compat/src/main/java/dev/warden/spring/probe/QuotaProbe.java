package dev.warden.spring.probe;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;

/**
 * Up when the quota engine's Redis answers a balance read (one {@code EVALSHA}: the server and the loaded
 * scripts) of a probe account. A probe partition without its marker is reported, not down: it means Redis
 * lost its data, or only that no account was opened in that partition yet.
 */
public final class QuotaProbe {

    /** The probe account's id. */
    public static final String PROBE_ACCOUNT = "warden-health-probe";

    /** What an indicator reports when the probe throws. */
    public static final String FAILURE = "the quota engine's Redis could not be reached";

    private QuotaProbe() {
    }

    /** Probes {@code quota} (give it the unmetered service: probes are not traffic) and writes to {@code report}. */
    public static void check(QuotaService quota, HealthReport report) {
        report.detail("service", quota.toString());
        long start = System.nanoTime();
        try {
            quota.balance(PROBE_ACCOUNT);
        } catch (QuotaException e) {
            if (e.reason() != QuotaException.Reason.DATA_LOST) {
                throw e;
            }
            report.detail("probePartition", "no marker: Redis lost its data, or no account was opened in it yet");
        }
        report.up().detail("probeMillis", (System.nanoTime() - start) / 1_000_000);
    }
}
