package dev.warden.examples.export;

import dev.warden.examples.Config;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.WardenSettings;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A long job under one lock: it runs for many times the lock's TTL while the lease keeper renews the
 * lease every TTL/3, and stops as soon as the lease is lost. Two things stop it: the {@code onLost}
 * listener interrupts the batch in hand, and no batch starts before {@code lease.isValid()} said yes.
 * The job is also a {@link LockObserver}, to count the keeper's renewals.
 *
 * <pre>
 * java dev.warden.examples.export.ExportJob examples/config/redis.properties 16 500ms
 * </pre>
 * Exit code: 0 every batch written; 1 the lease was lost and the export is incomplete; 3 no lock.
 */
public final class ExportJob implements LockObserver {

    public static final String LOCK_NAME = "reconciliation-export";

    /** What the job did; times are {@link System#nanoTime()} readings ({@code lostAt} 0: not lost), for a caller's checks. */
    public record Result(long fencingToken, int batches, int written, boolean abandoned, long acquiredAt,
                         long lastBatchStartedAt, Optional<LeaseLost> lost, long lostAt, long stoppedAt,
                         Optional<ReleaseOutcome> release) {

        public boolean completed() {
            return written == batches;
        }
    }

    private final AtomicLong renewals = new AtomicLong();
    private final PrintStream out;

    public ExportJob(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }

    /** {@code <settings file> [batches] [time per batch]}; returns the exit code. */
    public static int run(String[] args, PrintStream out) {
        var settings = Config.load(args.length > 0 ? args[0] : null);
        int batches = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        Duration perBatch = WardenSettings.duration(args.length > 2 ? args[2] : "500ms");
        ExportJob job = new ExportJob(out);
        try (LockClient locks = LockClient.create(settings, job)) {
            Optional<Lease> lease = locks.lock(LOCK_NAME).tryAcquire(Duration.ofSeconds(10));
            if (lease.isEmpty()) {
                out.println("export-job: another export holds '" + LOCK_NAME + "'");
                return 3;
            }
            return job.export(lease.get(), batches, perBatch).completed() ? 0 : 1;
        } catch (LockException e) {
            out.println("export-job: " + e.getMessage() + " (" + e.reason() + ")");
            return 3;
        }
    }

    @Override
    public void renewed(String name, long fencingToken, Duration remaining) {
        renewals.incrementAndGet();
    }

    /** Renewals the lease keeper made for this job's client so far. */
    public long renewals() {
        return renewals.get();
    }

    /** Writes {@code batches} batches of {@code perBatch} each while {@code lease} holds, then releases it. */
    public Result export(Lease lease, int batches, Duration perBatch) {
        long acquired = System.nanoTime();
        out.printf("  %-10s '%s', fencing token %d; lease valid for %d ms%n", "acquired", lease.name(),
                lease.fencingToken(), lease.remaining().toMillis());

        // The listener runs on Warden's event thread: it cancels the batch in hand by interrupting the job.
        Thread worker = Thread.currentThread();
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        AtomicLong lostAt = new AtomicLong();
        boolean[] busy = {true}; // guarded by itself: no interrupt once the job is done
        lease.onLost(event -> {
            lostAt.set(System.nanoTime());
            lost.set(event);
            out.printf("  %-10s %s: the lease is lost (%s): cancelling the export%n", "LOST", since(acquired), event.reason());
            synchronized (busy) {
                if (busy[0]) {
                    worker.interrupt();
                }
            }
        });

        int written = 0;
        long lastStart = 0;
        boolean abandoned = false;
        try {
            for (int i = 1; i <= batches; i++) {
                long checked = System.nanoTime();
                if (!lease.isValid()) {
                    break;
                }
                lastStart = checked;
                try {
                    TimeUnit.NANOSECONDS.sleep(perBatch.toNanos()); // the batch: here time passing, interruptible as real I/O
                } catch (InterruptedException e) {
                    abandoned = true;
                    out.printf("  %-10s batch %d/%d abandoned mid-write: the lease was lost%n", "stopped", i, batches);
                    break;
                }
                written++;
                out.printf("  %-10s %2d/%d written   %s held   lease valid %d ms more   renewals: %d%n", "batch", i,
                        batches, since(acquired), lease.remaining().toMillis(), renewals.get());
            }
        } finally {
            synchronized (busy) {
                busy[0] = false;
            }
            Thread.interrupted(); // a loss after the last batch must not interrupt what the caller does next
        }
        long stopped = System.nanoTime();
        ReleaseOutcome release = null;
        try {
            release = lease.release(); // LOST when the lock was taken: whoever holds it now is not touched
        } catch (LockException e) {
            out.println("  release not confirmed (" + e.reason() + "): the lock expires after its TTL");
        }
        out.printf("%n%s: %d of %d batches written in %s on one lease (token %d), renewed %d times; release: %s.%n",
                written == batches ? "Done" : "Stopped", written, batches, since(acquired), lease.fencingToken(),
                renewals.get(), release);
        return new Result(lease.fencingToken(), batches, written, abandoned, acquired, lastStart,
                Optional.ofNullable(lost.get()), lostAt.get(), stopped, Optional.ofNullable(release));
    }

    private static String since(long start) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - start) / 1e9);
    }
}
