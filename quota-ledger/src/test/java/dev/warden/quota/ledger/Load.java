package dev.warden.quota.ledger;

import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Deductions from a thread of their own, asynchronous with a bounded number in flight, optionally at
 * a fixed rate; every acknowledged (applied) deduction is counted per account, so a test can compare
 * the ledger with what callers were told.
 */
final class Load implements AutoCloseable {

    final Map<String, AtomicLong> acknowledged = new ConcurrentHashMap<>();
    final Map<String, AtomicLong> acknowledgedCount = new ConcurrentHashMap<>();
    final AtomicLong sent = new AtomicLong();
    /** The journal entry id of every acknowledged deduction, by account. */
    final Map<String, java.util.Set<String>> entries = new ConcurrentHashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Semaphore inFlight;
    private final int maxInFlight;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param perSecond deductions per second, or 0 for as fast as the in-flight bound allows
     */
    Load(QuotaService quota, List<String> accounts, int maxInFlight, int perSecond) {
        this.maxInFlight = maxInFlight;
        this.inFlight = new Semaphore(maxInFlight);
        for (String a : accounts) {
            acknowledged.put(a, new AtomicLong());
            acknowledgedCount.put(a, new AtomicLong());
            entries.put(a, ConcurrentHashMap.newKeySet());
        }
        String run = UUID.randomUUID().toString().substring(0, 8);
        this.thread = new Thread(() -> {
            long started = System.nanoTime();
            long n = 0;
            while (running) {
                if (perSecond > 0) {
                    long due = started + n * 1_000_000_000L / perSecond;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                        continue;
                    }
                }
                try {
                    if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        continue;
                    }
                } catch (InterruptedException e) {
                    return;
                }
                String a = accounts.get(ThreadLocalRandom.current().nextInt(accounts.size()));
                long amount = 1 + ThreadLocalRandom.current().nextInt(9);
                long i = n++;
                sent.incrementAndGet();
                quota.deductAsync(a, amount, "load-" + run + "-" + i).whenComplete((o, e) -> {
                    inFlight.release();
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else if (o instanceof Outcome.Applied applied) {
                        acknowledged.get(a).addAndGet(amount);
                        acknowledgedCount.get(a).incrementAndGet();
                        entries.get(a).add(applied.entryId());
                    } else if (!(o instanceof Outcome.Insufficient)) {
                        failure.compareAndSet(null, new AssertionError("unexpected outcome " + o));
                    }
                });
            }
        }, "test-load");
        thread.setDaemon(true);
        thread.start();
    }

    long total() {
        return acknowledged.values().stream().mapToLong(AtomicLong::get).sum();
    }

    long count() {
        return acknowledgedCount.values().stream().mapToLong(AtomicLong::get).sum();
    }

    /** Stops sending and waits for every deduction in flight to be answered; throws the first failure. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(10_000);
        if (!inFlight.tryAcquire(maxInFlight, 30, TimeUnit.SECONDS)) {
            throw new AssertionError("deductions in flight were not answered");
        }
        inFlight.release(maxInFlight);
        if (failure.get() != null) {
            throw new AssertionError("a deduction failed", failure.get());
        }
    }
}
