package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The seed's rejected alternatives, each a read-then-write deduction of a plain Redis balance key
 * ({@code GET}, compute, {@code SET}), made safe the way the seed describes and then left behind:
 * <ul>
 *   <li><b>in-process lock</b>: a {@link ReentrantLock} per account around the read and the write —
 *       correct only while one JVM is the only writer (a second service instance would lose updates);</li>
 *   <li><b>SET NX PX lock</b>: {@code SET lock NX PX} (spinning with a short pause while it is held), the
 *       read and the write, then a Lua compare-and-delete; no fencing token, so a holder paused past
 *       its expiry writes over its successor;</li>
 *   <li><b>WATCH/MULTI</b>: optimistic: {@code WATCH}, read, {@code MULTI}, write, {@code EXEC}, again
 *       when another writer aborted it.</li>
 * </ul>
 * Each proves its final balance (initial − acknowledged) and reports its failure mode's count: lock
 * retries or aborted transactions per deduction. None journals, fences or is idempotent, which
 * Warden's one script does in the same round trip.
 */
public final class SeedAlternatives implements Workload {

    /** How the read-then-write is protected. */
    public enum Style {
        IN_PROCESS_LOCK("seed: in-process lock + GET/SET"),
        SET_NX_LOCK("seed: SET NX PX lock + GET/SET"),
        WATCH_MULTI("seed: WATCH/MULTI optimistic");

        final String label;

        Style(String label) {
            this.label = label;
        }
    }

    private static final String UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1])"
            + " else return 0 end";

    private final String uri;
    private final Accounts accounts;
    private final Style style;
    private final String prefix = "seed-" + UUID.randomUUID().toString().substring(0, 8);
    private final LongAdder retries = new LongAdder();
    private final LongAdder done = new LongAdder();
    private RedisClient client;
    private StatefulRedisConnection<String, String> shared;
    private final List<StatefulRedisConnection<String, String>> perThread = new ArrayList<>();
    private ReentrantLock[] locks;
    private long baseline;

    public SeedAlternatives(String uri, Accounts accounts, Style style) {
        this.uri = uri;
        this.accounts = accounts;
        this.style = style;
    }

    @Override
    public String scenario() {
        return "quota deduct, " + accounts.label();
    }

    @Override
    public String implementation() {
        return style.label;
    }

    @Override
    public Server server() {
        return Server.REDIS;
    }

    private String key(int i) {
        return prefix + ":" + accounts.account(i);
    }

    @Override
    public void setUp(int threads) {
        client = RedisClient.create(uri);
        shared = client.connect();
        for (int i = 0; i < accounts.count(); i++) {
            shared.sync().set(key(i), Long.toString(Accounts.INITIAL));
        }
        locks = new ReentrantLock[accounts.count()];
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new ReentrantLock();
        }
        if (style == Style.WATCH_MULTI) {
            for (int t = 0; t < threads; t++) {
                perThread.add(client.connect()); // WATCH is state of the connection
            }
        }
        baseline = total();
    }

    @Override
    public Operation operation(int index) {
        RedisCommands<String, String> redis = style == Style.WATCH_MULTI ? perThread.get(index).sync() : shared.sync();
        String owner = prefix + "-" + index;
        return switch (style) {
            case IN_PROCESS_LOCK -> () -> {
                int i = ThreadLocalRandom.current().nextInt(accounts.count());
                locks[i].lock();
                try {
                    readThenWrite(redis, key(i));
                } finally {
                    locks[i].unlock();
                }
            };
            case SET_NX_LOCK -> () -> {
                int i = ThreadLocalRandom.current().nextInt(accounts.count());
                String lock = key(i) + ":lock";
                while (redis.set(lock, owner, SetArgs.Builder.nx().px(5_000)) == null) {
                    retries.increment();
                    LockSupport.parkNanos(50_000);
                }
                try {
                    readThenWrite(redis, key(i));
                } finally {
                    redis.eval(UNLOCK, ScriptOutputType.INTEGER, new String[]{lock}, owner);
                }
            };
            case WATCH_MULTI -> () -> {
                int i = ThreadLocalRandom.current().nextInt(accounts.count());
                while (true) {
                    redis.watch(key(i));
                    long balance = Long.parseLong(redis.get(key(i)));
                    if (balance < 1) {
                        redis.unwatch();
                        throw new IllegalStateException("insufficient");
                    }
                    redis.multi();
                    redis.set(key(i), Long.toString(balance - 1));
                    TransactionResult result = redis.exec();
                    if (!result.wasDiscarded()) {
                        done.increment();
                        return;
                    }
                    retries.increment(); // another writer changed the balance between WATCH and EXEC
                }
            };
        };
    }

    private void readThenWrite(RedisCommands<String, String> redis, String key) {
        long balance = Long.parseLong(redis.get(key));
        if (balance < 1) {
            throw new IllegalStateException("insufficient");
        }
        redis.set(key, Long.toString(balance - 1));
        done.increment();
    }

    @Override
    public void verify(long completed) {
        long dropped = baseline - total();
        if (dropped != completed) {
            throw new IllegalStateException(style.label + ": balances fell by " + dropped + " but " + completed
                    + " deductions were acknowledged");
        }
    }

    @Override
    public String note() {
        long n = done.sum();
        if (style == Style.IN_PROCESS_LOCK || n == 0) {
            return style == Style.IN_PROCESS_LOCK ? "correct in one JVM only" : "";
        }
        return String.format(Locale.ROOT, "%.2f %s per deduction", retries.sum() / (double) n,
                style == Style.WATCH_MULTI ? "aborted EXECs" : "lock retries");
    }

    private long total() {
        long sum = 0;
        for (int i = 0; i < accounts.count(); i++) {
            sum += Long.parseLong(shared.sync().get(key(i)));
        }
        return sum;
    }

    @Override
    public void close() {
        for (StatefulRedisConnection<String, String> c : perThread) {
            c.close();
        }
        if (shared != null) {
            shared.close();
        }
        if (client != null) {
            client.shutdown();
        }
    }
}
