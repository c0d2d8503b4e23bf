package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Reconciliation on a timer ({@link dev.warden.quota.ledger.Reconciler#schedule}): one daemon thread, a failed run logged and skipped. */
public final class ReconciliationSchedule {

    private static final Logger log = LoggerFactory.getLogger(Pages.RECONCILER_LOG);

    private ReconciliationSchedule() {
    }

    /** Runs {@code run} every {@code every}, first at once; close the handle to stop (it waits up to 10 s). */
    public static AutoCloseable start(Duration every, Supplier<ReconciliationReport> run, Consumer<ReconciliationReport> onReport) {
        Objects.requireNonNull(every, "every");
        Objects.requireNonNull(onReport, "onReport");
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("every must be positive, was " + every);
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-reconciliation");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                ReconciliationReport report = run.get();
                if (!report.clean()) {
                    log.warn("{}", report);
                }
                onReport.accept(report);
            } catch (RuntimeException e) {
                log.error("scheduled reconciliation failed", e);
            }
        }, 0, every.toNanos(), TimeUnit.NANOSECONDS);
        return () -> {
            timer.shutdownNow();
            try {
                timer.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }
}
