package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Deductions through Warden's quota engine: one Lua script per deduction, with idempotency,
 * fence check and journal. Synchronous (one in flight per thread), asynchronous (a window of
 * deductions in flight per thread, pipelined on the connection), or charges under the account's lock (blocking, or
 * a window of {@code chargeAsync} per thread).
 */
public final class LuaDeduct implements Workload {

    /** How each thread drives the engine. */
    public enum Mode {
        SYNC, ASYNC, LOCKED,
        /** {@code chargeAsync}: a window of charges in flight per thread, as ASYNC deducts. */
        LOCKED_ASYNC
    }

    private static final int WINDOW = 32;

    private final String implementation;
    private final Map<String, Object> settings;
    private final Accounts accounts;
    private final Mode mode;
    private final String prefix;
    private final int buckets;
    private QuotaService quota;
    private long baseline;

    public LuaDeduct(String implementation, Map<String, Object> settings, Accounts accounts, Mode mode) {
        this(implementation, settings, accounts, mode, 1);
    }

    /**
     * @param buckets when above 1, each account is split into that many buckets ({@link QuotaService#split})
     *                before the run: the hot-account rows, unsplit against split
     */
    public LuaDeduct(String implementation, Map<String, Object> settings, Accounts accounts, Mode mode, int buckets) {
        this.buckets = buckets;
        this.implementation = implementation;
        this.settings = settings;
        this.accounts = accounts;
        this.mode = mode;
        this.prefix = implementation.replaceAll("[^A-Za-z0-9]+", "-");
    }

    @Override
    public String scenario() {
        return "quota deduct, " + accounts.label();
    }

    @Override
    public Server server() {
        return Server.REDIS;
    }

    @Override
    public String implementation() {
        return implementation;
    }

    @Override
    public int unitsPerOperation() {
        return mode == Mode.ASYNC || mode == Mode.LOCKED_ASYNC ? WINDOW : 1;
    }

    @Override
    public void setUp(int threads) {
        Map<String, Object> s = new HashMap<>(settings);
        quota = QuotaService.create(s);
        for (int i = 0; i < accounts.count(); i++) {
            Outcome opened = quota.open(accounts.account(prefix, i), Accounts.INITIAL);
            if (opened.status() != Outcome.Status.APPLIED && opened.status() != Outcome.Status.ACCOUNT_EXISTS) {
                throw new IllegalStateException("could not open " + accounts.account(prefix, i) + ": " + opened);
            }
            if (buckets > 1) {
                quota.split(accounts.account(prefix, i), buckets);
            }
        }
        baseline = total();
    }

    @Override
    public Operation operation(int index) {
        String requests = prefix + "-" + index + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + "-";
        long[] seq = {0};
        return switch (mode) {
            case SYNC -> () -> check(quota.deduct(next(), 1, requests + seq[0]++));
            case LOCKED -> () -> check(quota.charge(next(), requests + seq[0]++, balance -> 1));
            case ASYNC -> () -> {
                CompletableFuture<?>[] window = new CompletableFuture<?>[WINDOW];
                for (int i = 0; i < WINDOW; i++) {
                    window[i] = quota.deductAsync(next(), 1, requests + seq[0]++).toCompletableFuture()
                            .thenAccept(LuaDeduct::check);
                }
                CompletableFuture.allOf(window).join();
            };
            case LOCKED_ASYNC -> () -> {
                CompletableFuture<?>[] window = new CompletableFuture<?>[WINDOW];
                for (int i = 0; i < WINDOW; i++) {
                    window[i] = quota.chargeAsync(next(), requests + seq[0]++, balance -> 1).toCompletableFuture()
                            .thenAccept(LuaDeduct::check);
                }
                CompletableFuture.allOf(window).join();
            };
        };
    }

    private String next() {
        return accounts.account(prefix, ThreadLocalRandom.current().nextInt(accounts.count()));
    }

    private static void check(Outcome outcome) {
        if (outcome.status() != Outcome.Status.APPLIED) {
            throw new IllegalStateException("deduction not applied: " + outcome);
        }
    }

    /** Final balances must equal initial − applied, whatever the errors along the way. */
    @Override
    public void verify(long completed) {
        long dropped = baseline - total();
        if (dropped != completed) {
            throw new IllegalStateException(implementation + ": balances fell by " + dropped + " but " + completed
                    + " deductions were acknowledged");
        }
    }

    private long total() {
        long sum = 0;
        for (int i = 0; i < accounts.count(); i++) {
            sum += quota.balance(accounts.account(prefix, i)).orElseThrow();
        }
        return sum;
    }

    @Override
    public void close() {
        if (quota != null) {
            quota.close();
        }
    }
}
