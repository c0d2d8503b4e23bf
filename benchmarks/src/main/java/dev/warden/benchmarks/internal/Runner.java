package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;
import dev.warden.benchmarks.Workload;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Closed-loop load: each thread repeats its operation back to back, first for a warm-up that is
 * not recorded, then for the measured duration. Latency goes to an HdrHistogram per run.
 */
public final class Runner {

    private final Duration warmUp;
    private final Duration measured;

    public Runner(Duration warmUp, Duration measured) {
        this.warmUp = warmUp;
        this.measured = measured;
    }

    /**
     * @param server the server whose CPU time per operation to report, or null
     */
    public Result run(Workload workload, int threads, ServerCpu server) throws Exception {
        workload.setUp(threads);
        Recorder recorder = new Recorder(3);
        LongAdder completed = new LongAdder();
        LongAdder measuredOps = new LongAdder();
        LongAdder errors = new LongAdder();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long[] window = new long[2];
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Workload.Operation op = workload.operation(i);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    return;
                }
                long measureFrom = window[0];
                long measureUntil = window[1];
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 - measureUntil >= 0) {
                        break;
                    }
                    try {
                        op.run();
                        long t1 = System.nanoTime();
                        completed.increment();
                        if (t0 - measureFrom >= 0) {
                            recorder.recordValue(Math.max(1, (t1 - t0) / 1000));
                            measuredOps.increment();
                        }
                    } catch (Throwable e) {
                        errors.increment();
                        firstError.compareAndSet(null, e);
                    }
                }
            }, "bench-" + workload.implementation() + "-" + i);
            t.setDaemon(true);
            workers.add(t);
            t.start();
        }
        long now = System.nanoTime();
        window[0] = now + warmUp.toNanos();
        window[1] = window[0] + measured.toNanos();
        start.await();
        sleepUntil(window[0]);
        Duration clientBefore = ServerCpu.thisProcess();
        java.util.Map<String, Duration> groupsBefore = server == null ? null : server.usedByGroup();
        sleepUntil(window[1]);
        Duration clientCpu = ServerCpu.thisProcess().minus(clientBefore);
        java.util.Map<String, Duration> groupsCpu = new java.util.LinkedHashMap<>();
        if (server != null) {
            server.usedByGroup().forEach((group, used) -> groupsCpu.put(group, used.minus(groupsBefore.get(group))));
        }
        Duration serverCpu = server == null ? null : groupsCpu.values().stream().reduce(Duration.ZERO, Duration::plus);
        for (Thread t : workers) {
            t.join(warmUp.plus(measured).plusSeconds(60).toMillis());
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not finish: an operation hangs");
            }
        }
        Histogram h = recorder.getIntervalHistogram();
        double seconds = measured.toNanos() / 1e9;
        int units = workload.unitsPerOperation();
        workload.verify(completed.sum() * units);
        long unitsDone = measuredOps.sum() * units;
        String note = workload.note() + (firstError.get() == null ? "" : (workload.note().isEmpty() ? "" : "; ")
                + "first error: " + firstError.get());
        if (server != null && server.grouped() && unitsDone > 0) {
            StringBuilder b = new StringBuilder("server CPU µs/op by node group:");
            groupsCpu.forEach((group, used) -> b.append(String.format(java.util.Locale.ROOT, " %s %.1f", group,
                    used.toNanos() / 1e3 / unitsDone)));
            note = note.isEmpty() ? b.toString() : note + "; " + b;
        }
        double serverMicros = serverCpu == null || unitsDone == 0 ? Double.NaN : serverCpu.toNanos() / 1e3 / unitsDone;
        double clientMicros = unitsDone == 0 ? Double.NaN : clientCpu.toNanos() / 1e3 / unitsDone;
        return new Result(workload.scenario(), workload.implementation(), threads, unitsDone, seconds,
                unitsDone / seconds, h.getValueAtPercentile(50), h.getValueAtPercentile(99),
                h.getValueAtPercentile(99.9), h.getMaxValue(), errors.sum(), clientMicros, serverMicros, note);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }
}
