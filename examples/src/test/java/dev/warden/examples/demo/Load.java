package dev.warden.examples.demo;

import dev.warden.examples.charge.ChargeMerchant;
import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The three channels charging the merchants: {@code threads} workers per channel, each charging one
 * merchant after another until the time is up. A charge is {@link QuotaService#charge}: under the
 * merchant's lock (when one is configured) read the balance, price, deduct with the lease's fencing
 * token, release.
 *
 * <p>Pricing reads the balance: a charge costs its channel's list price, except that the last units
 * of a plan are charged as they are (a 5-unit call with 3 units left takes 3), so the plan ends at
 * exactly zero. That makes the read matter: under the lock the balance cannot change between the
 * read and the deduction, so a charge is refused only when the plan is used up; without a lock a
 * concurrent charge can spend the units in between, and the Lua script's balance check refuses the
 * deduction ("priced on a stale balance"). Either way no balance goes below zero.
 */
final class Load {

    /** What one channel did. */
    record ChannelResult(Channel channel, long charges, long applied, Histogram latencyMicros) {
    }

    private static final long MAX_LATENCY_MICROS = TimeUnit.MINUTES.toMicros(2);
    private static final int RETRIES = 3;

    private final QuotaService quota;
    private final List<String> accounts;
    private final double hotShare;
    private final int threadsPerChannel;
    private final String runId;

    private final LongAdder charges = new LongAdder();
    private final LongAdder[] acknowledged;
    private final Map<Channel, LongAdder> perChannel = new EnumMap<>(Channel.class);
    private final Map<Channel, LongAdder> appliedPerChannel = new EnumMap<>(Channel.class);
    private final Map<Outcome.Status, LongAdder> outcomes = new EnumMap<>(Outcome.Status.class);
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final LongAdder stalePrices = new LongAdder();
    private final LongAdder usedUp = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final List<Worker> workers = new ArrayList<>();
    private volatile boolean stopped;

    Load(QuotaService quota, List<String> accounts, double hotShare, int threadsPerChannel, String runId) {
        this.quota = quota;
        this.accounts = List.copyOf(accounts);
        this.hotShare = hotShare;
        this.threadsPerChannel = threadsPerChannel;
        this.runId = runId;
        this.acknowledged = new LongAdder[accounts.size()];
        for (int i = 0; i < acknowledged.length; i++) {
            acknowledged[i] = new LongAdder();
        }
        for (Channel c : Channel.values()) {
            perChannel.put(c, new LongAdder());
            appliedPerChannel.put(c, new LongAdder());
        }
        for (Outcome.Status s : Outcome.Status.values()) {
            outcomes.put(s, new LongAdder());
        }
    }

    /** Charges until {@code duration} has passed, then waits for the workers (at most {@code grace} more). */
    void run(Duration duration, Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + duration.toNanos();
        for (Channel c : Channel.values()) {
            for (int i = 0; i < threadsPerChannel; i++) {
                Worker w = new Worker(c, i, deadline);
                workers.add(w);
            }
        }
        workers.forEach(Thread::start);
        long joinBy = deadline + grace.toNanos();
        for (Worker w : workers) {
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinBy - System.nanoTime()));
            w.join(left);
        }
        stop();
    }

    /** Stops the workers: they finish the charge in hand (interrupted when they wait) and end. */
    void stop() throws InterruptedException {
        stopped = true;
        for (Worker w : workers) {
            if (w.isAlive()) {
                w.interrupt();
            }
        }
        for (Worker w : workers) {
            w.join(10_000);
        }
    }

    /** Charges finished so far, any outcome. */
    long charges() {
        return charges.sum();
    }

    /** Per channel, in channel order; latencies merged over the channel's workers. */
    List<ChannelResult> channels() {
        List<ChannelResult> result = new ArrayList<>();
        for (Channel c : Channel.values()) {
            Histogram h = new Histogram(MAX_LATENCY_MICROS, 3);
            for (Worker w : workers) {
                if (w.channel == c) {
                    synchronized (w.latency) {
                        h.add(w.latency);
                    }
                }
            }
            result.add(new ChannelResult(c, perChannel.get(c).sum(), appliedPerChannel.get(c).sum(), h));
        }
        return result;
    }

    Map<Outcome.Status, Long> outcomes() {
        Map<Outcome.Status, Long> m = new EnumMap<>(Outcome.Status.class);
        outcomes.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** Failures that were not outcomes, by {@link QuotaException.Reason} (or exception type). */
    Map<String, Long> errors() {
        Map<String, Long> m = new TreeMap<>();
        errors.forEach((k, v) -> m.put(k, v.sum()));
        return Collections.unmodifiableMap(m);
    }

    /** Insufficient although the balance read under (or without) the lock covered the price. */
    long stalePrices() {
        return stalePrices.sum();
    }

    /** Insufficient because the plan was used up when the charge was priced. */
    long usedUp() {
        return usedUp.sum();
    }

    /** Charges retried with the same request id after Redis did not answer. */
    long retries() {
        return retries.sum();
    }

    /** The deductions each merchant's callers were told were applied, by account index. */
    long acknowledged(int account) {
        return acknowledged[account].sum();
    }

    /** Workers still running after {@link #run} returned (zero unless something hung). */
    long stuckWorkers() {
        return workers.stream().filter(Thread::isAlive).count();
    }

    private int pick(ThreadLocalRandom random) {
        int n = accounts.size();
        if (n == 1 || random.nextDouble() < hotShare) {
            return 0;
        }
        return 1 + random.nextInt(n - 1);
    }

    private final class Worker extends Thread {

        private final Channel channel;
        private final int index;
        private final long deadline;
        private final Histogram latency = new Histogram(MAX_LATENCY_MICROS, 3);

        Worker(Channel channel, int index, long deadline) {
            super(channel.label() + "-" + (index + 1));
            setDaemon(true);
            this.channel = channel;
            this.index = index;
            this.deadline = deadline;
        }

        @Override
        public void run() {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            long seq = 0;
            while (!stopped && System.nanoTime() - deadline < 0) {
                int m = pick(random);
                String account = accounts.get(m);
                String requestId = channel.label() + "-" + runId + "-" + index + "-" + (++seq);
                long listPrice = channel.listPrice();
                long[] priced = new long[2];
                long started = System.nanoTime();
                try {
                    Outcome o = charge(account, requestId, listPrice, priced);
                    record(started);
                    count(o, m, priced);
                } catch (QuotaException e) {
                    record(started);
                    errors.computeIfAbsent(e.reason().name(), k -> new LongAdder()).increment();
                    if (e.reason() == QuotaException.Reason.INTERRUPTED || e.reason() == QuotaException.Reason.CLOSED) {
                        break;
                    }
                } catch (RuntimeException e) {
                    record(started);
                    errors.computeIfAbsent(e.getClass().getSimpleName(), k -> new LongAdder()).increment();
                }
                charges.increment();
                perChannel.get(channel).increment();
            }
        }

        private Outcome charge(String account, String requestId, long listPrice, long[] priced) {
            int attempt = 0;
            while (true) {
                try {
                    return quota.charge(account, requestId, balance -> {
                        long amount = ChargeMerchant.price(listPrice, balance);
                        priced[0] = amount;
                        priced[1] = balance;
                        return amount;
                    });
                } catch (QuotaException e) {
                    // The deduction may or may not have been made: the same request id applies it once.
                    if (e.reason() != QuotaException.Reason.UNAVAILABLE || ++attempt > RETRIES || stopped) {
                        throw e;
                    }
                    retries.increment();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50L * attempt));
                }
            }
        }

        private void count(Outcome o, int m, long[] priced) {
            outcomes.get(o.status()).increment();
            if (o instanceof Outcome.Applied || o instanceof Outcome.Duplicate) {
                applied(m, priced[0]);
            } else if (o instanceof Outcome.Conflict c) {
                // A retry priced differently from the attempt that was applied: the recorded amount counts.
                if (c.kind() == EntryKind.DEDUCT && c.account().equals(accounts.get(m))) {
                    applied(m, c.amount());
                }
            } else if (o instanceof Outcome.Insufficient) {
                if (priced[1] >= priced[0]) {
                    stalePrices.increment();
                } else {
                    usedUp.increment();
                }
            }
        }

        private void applied(int m, long amount) {
            acknowledged[m].add(amount);
            appliedPerChannel.get(channel).increment();
        }

        private void record(long started) {
            long micros = Math.max(1, (System.nanoTime() - started) / 1000);
            synchronized (latency) {
                latency.recordValue(Math.min(micros, MAX_LATENCY_MICROS));
            }
        }
    }
}
