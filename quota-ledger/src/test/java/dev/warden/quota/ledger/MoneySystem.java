package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.quota.Deduction;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.Outcome;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaListener;
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.internal.QuotaFactory;
import dev.warden.quota.internal.Scripts;
import dev.warden.quota.ledger.MoneyStep.Via;
import dev.warden.quota.ledger.internal.consume.BatchWriter;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.VirtualClock;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The money path's real parts for the checker: one Redis and one PostgreSQL schema, or one H2 database (a
 * class shares them),
 * a quota engine on a virtual clock per program, ledger consumers started and stopped by the program's
 * drain steps, the reconciler, and the faults (a consumer that dies or freezes mid-batch, a move cut
 * between its steps, the retention passing, Redis restarting empty). {@link #run} runs one step here and
 * on {@link MoneyModel} and fails on the first difference; {@link MoneyChecks} holds the invariants.
 *
 * <p>One program at a time (not thread-safe).
 */
final class MoneySystem implements AutoCloseable {

    static final int PARTITIONS = 4;
    static final List<String> ACCOUNTS = List.of("a", "b", "c");
    static final String GROUP = LedgerConsumer.DEFAULT_GROUP;

    final RedisServer redis;
    final DataSource database;
    private final Dialect dialect;
    private final AutoCloseable closeDatabase;
    final Map<String, Object> settings;
    final KeyLayout layout;
    private final LockClient locks;
    private final Reconciler reconciler;
    /** Charges with an odd request id hash go through {@code chargeAsync} (set for the H2 system only). */
    private boolean asyncCharges;

    // One program's state.
    private QuotaService quota;
    private final VirtualClock clock = new VirtualClock(Instant.parse("2026-12-01T00:00:00Z"));
    MoneyModel model;
    private final Map<Integer, Ghost> ghosts = new HashMap<>();
    private final Map<Integer, Integer> drains = new HashMap<>();
    /** The program's calls that change money, for {@link MoneyStep.Again}. */
    private final List<MoneyStep> changes = new ArrayList<>();
    private int cuts;
    final List<String> trace = new ArrayList<>();

    /** A consumer that read a partition's new entries and died, or froze, before committing them. */
    private record Ghost(long token, int drainsBefore, List<BatchWriter.Raw> raws, List<MoneyModel.Event> events) {
    }

    MoneySystem(RedisServer redis, PostgresServer postgres) {
        this(redis, Support.freshPostgres(postgres), Dialect.POSTGRESQL);
    }

    /**
     * On H2 (the demo's embedded default), in memory: the same programs, through its own statements, with charges
     * combined ({@code warden.quota.combine-charges}).
     */
    static MoneySystem onH2(RedisServer redis) {
        DataSource h2 = Support.h2();
        Ledger.migrate(h2);
        MoneySystem system = new MoneySystem(redis, h2, Dialect.H2);
        // Its charges go through the combined path (one hold, priced in rounds), PostgreSQL's one at a time: both checked;
        // here half of them (by request id) through chargeAsync, the other half blocking.
        system.settings.put("warden.quota.combine-charges", "true");
        system.asyncCharges = true;
        return system;
    }

    /** A charge, blocking or (on H2, for an odd request id hash) through {@code chargeAsync}, its failure rethrown. */
    private Outcome charge(MoneyStep.Charge s) {
        if (!asyncCharges || (s.requestId().hashCode() & 1) == 0) {
            return quota.charge(s.account(), s.requestId(), s.price().function::applyAsLong);
        }
        try {
            return quota.chargeAsync(s.account(), s.requestId(), s.price().function::applyAsLong).toCompletableFuture()
                    .get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("chargeAsync of " + s.requestId() + " not answered in 60 s", e);
        }
    }

    private MoneySystem(RedisServer redis, DataSource database, Dialect dialect) {
        this.redis = redis;
        this.database = database;
        this.dialect = dialect;
        this.closeDatabase = database instanceof HikariDataSource pool ? pool : () -> {
        };
        this.settings = new HashMap<>(Support.settings(redis));
        settings.put("warden.quota.namespace", "money");
        settings.put("warden.quota.partitions", Integer.toString(PARTITIONS));
        settings.put("warden.quota.idempotency-retention", "1h"); // passes only when a step says so
        this.layout = new KeyLayout("money", PARTITIONS);
        Map<String, Object> lockSettings = new HashMap<>();
        lockSettings.put("warden.lock.backend", "redis");
        lockSettings.put("warden.lock.endpoints", redis.uri());
        lockSettings.put("warden.lock.ttl", "5s");
        // A cold JVM on a loaded machine (CI builds two modules at once) once took over 5 s: class loading, not the network.
        lockSettings.put("warden.lock.connect-timeout", "30s");
        this.locks = LockClient.create(lockSettings);
        this.reconciler = Reconciler.create(settings, database);
    }

    // ---- one program ----

    /** Empties Redis and the ledger and opens a new engine: every program starts from nothing. */
    void reset() {
        closeQuota();
        redis.command("FLUSHALL");
        try (Connection c = database.getConnection(); Statement s = c.createStatement()) {
            if (dialect == Dialect.POSTGRESQL) {
                s.execute("TRUNCATE " + String.join(", ", Ledger.TABLES));
            } else {
                for (String table : Ledger.TABLES) {
                    s.execute("TRUNCATE TABLE " + table); // H2 truncates one table at a time
                }
            }
        } catch (SQLException e) {
            throw new AssertionError("could not empty the ledger", e);
        }
        clock.set(Instant.parse("2026-12-01T00:00:00Z"));
        quota = QuotaFactory.create(settings, new QuotaListener() {
        }, clock);
        model = new MoneyModel(layout, clock.millis());
        ghosts.clear();
        drains.clear();
        changes.clear();
        cuts = 0;
        trace.clear();
    }

    /** Runs a whole program, then the end-of-program checks. */
    void check(List<MoneyStep> program) {
        reset();
        for (MoneyStep step : program) {
            run(step);
        }
        try {
            new MoneyChecks(this).atTheEnd();
        } catch (AssertionError e) {
            throw e.getMessage() != null && e.getMessage().contains("program so far:") ? e
                    : new AssertionError("at the end: " + e.getMessage() + "\n" + context(), e);
        }
    }

    /** Steps run since the system was made, the end-of-program checks' included. */
    long executed() {
        return executed;
    }

    private long executed;

    void run(MoneyStep step) {
        executed++;
        String[] said = new String[2];
        try {
            said = execute(step);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + context(), e);
        }
        trace.add(step.java() + (said == null ? "  (skipped)" : "  -> " + said[1]));
        if (said != null && said[0] != null && !matches(said[0], said[1])) {
            throw new AssertionError("step " + step.java() + ": the model says '" + said[0] + "', the system answered '"
                    + said[1] + "'\n" + context());
        }
        new MoneyChecks(this).afterEveryStep();
    }

    String context() {
        return "program so far:\n  " + String.join("\n  ", trace) + "\n" + model;
    }

    /** Runs a step on both sides: {expected, actual}, or null when the step does not apply now. */
    private String[] execute(MoneyStep step) {
        if (step instanceof MoneyStep.Again again) {
            if (changes.size() < again.back()) {
                return null;
            }
            MoneyStep retried = changes.get(changes.size() - again.back());
            if (again.unfenced() && retried instanceof MoneyStep.Deduct d && d.token() != 0) {
                retried = new MoneyStep.Deduct(d.account(), d.amount(), d.requestId(), d.via(), 0);
            }
            return execute(retried);
        }
        if (step instanceof MoneyStep.Credit || step instanceof MoneyStep.Deduct || step instanceof MoneyStep.DeductAll
                || step instanceof MoneyStep.Charge || step instanceof MoneyStep.Hold || step instanceof MoneyStep.Capture
                || step instanceof MoneyStep.Release || step instanceof MoneyStep.ChargeHold || step instanceof MoneyStep.Post) {
            changes.add(step);
        }
        MoneyModel m = model;
        if (step instanceof MoneyStep.Open s) {
            if (m.lost) {
                return null; // the recovery comes first: opening now would hide the loss (see docs/operations.md)
            }
            String actual = answer(() -> answer(quota.open(s.account(), s.amount())));
            return pair(m.open(s.account(), s.amount()), actual);
        }
        if (step instanceof MoneyStep.Credit s) {
            return withEntry(() -> applied(s.refund() ? quota.refund(s.account(), s.amount(), s.requestId())
                : quota.topUp(s.account(), s.amount(), s.requestId())),
                () -> m.change(s.refund() ? "refund" : "topup", s.account(), s.amount(), s.requestId(), -1));
        }
        if (step instanceof MoneyStep.Deduct s) {
            return withEntry(() -> applied(deduct(s)),
                () -> m.change("deduct", s.account(), s.amount(), s.requestId(), s.token() == 0 ? -1 : s.token()));
        }
        if (step instanceof MoneyStep.DeductAll s) {
            return deductAll(s);
        }
        if (step instanceof MoneyStep.Charge s) {
            return withEntry(() -> applied(charge(s)), () -> m.charge(s.account(), s.requestId(), s.price().function));
        }
        if (step instanceof MoneyStep.Hold s) {
            String actual = answer(() -> answer(quota.hold(s.account(), s.amount(), s.holdId(),
                    Duration.ofMillis(s.expiryMs()))));
            return pair(m.hold(s.account(), s.amount(), s.holdId(), s.expiryMs(), actual), actual);
        }
        if (step instanceof MoneyStep.Capture s) {
            String actual = answer(() -> answer(quota.capture(s.account(), s.holdId(), s.amount())));
            return pair(m.capture(s.account(), s.holdId(), s.amount()), actual);
        }
        if (step instanceof MoneyStep.Release s) {
            String actual = answer(() -> answer(quota.release(s.account(), s.holdId())));
            return pair(m.release(s.account(), s.holdId()), actual);
        }
        if (step instanceof MoneyStep.ChargeHold s) {
            String actual = answer(() -> answer(quota.chargeHold(s.account(), s.holdId(),
                    s.price().function::applyAsLong)));
            return pair(m.chargeHold(s.account(), s.holdId(), s.price().function), actual);
        }
        if (step instanceof MoneyStep.Advance s) {
            clock.advance(Duration.ofMillis(s.millis()));
            m.now += s.millis();
            if (!s.sweep()) {
                return new String[]{null, "advanced"};
            }
            String actual = answer(() -> "EXPIRED " + quota.expireHolds());
            return pair("EXPIRED " + m.expireHolds(), actual);
        }
        if (step instanceof MoneyStep.OpenBalance s) {
            String actual = answer(() -> answer(quota.openBalance(s.account(), s.balance())));
            return pair(m.openBalance(s.account(), s.balance()), actual);
        }
        if (step instanceof MoneyStep.Post s) {
            String actual = answer(() -> answer(quota.post(s.account(), s.requestId(), s.deltas())));
            return pair(m.post(s.account(), s.requestId(), s.deltas()), actual);
        }
        if (step instanceof MoneyStep.Split s) {
            String actual = answer(() -> answer(quota.split(s.account(), s.buckets())));
            String expected = s.buckets() > PARTITIONS ? "REFUSED IllegalArgumentException" : m.split(s.account(), s.buckets());
            return pair(expected, actual);
        }
        if (step instanceof MoneyStep.Merge s) {
            String actual = answer(() -> answer(quota.merge(s.account())));
            return pair(m.merge(s.account()), actual);
        }
        if (step instanceof MoneyStep.Balance s) {
            String actual = answer(() -> quota.balance(s.account()).isPresent()
                    ? "BALANCE " + quota.balance(s.account()).getAsLong() : "NONE");
            return pair(m.balance(s.account()).text(), actual);
        }
        if (step instanceof MoneyStep.CutMove s) {
            return cutMove(s);
        }
        if (step instanceof MoneyStep.Drain s) {
            drain(new TreeSet<>(s.partitions()));
            return new String[]{null, "drained"};
        }
        if (step instanceof MoneyStep.GhostRead s) {
            return ghostRead(s.partition());
        }
        if (step instanceof MoneyStep.GhostCommit s) {
            return ghostCommit(s.partition());
        }
        if (step instanceof MoneyStep.RetentionPasses s) {
            retentionPasses();
            m.retentionPasses();
            return new String[]{null, "passed"};
        }
        if (step instanceof MoneyStep.DataLoss s) {
            redis.command("FLUSHALL");
            redis.command("SCRIPT", "FLUSH");
            ghosts.clear();
            m.dataLoss();
            return new String[]{null, "lost"};
        }
        if (step instanceof MoneyStep.Bootstrap s) {
            String actual = answer(() -> {
                reconciler.bootstrap();
                return "BOOTSTRAPPED";
            });
            m.bootstrap();
            zeroPhantoms();
            return pair("BOOTSTRAPPED", actual);
        }
        if (step instanceof MoneyStep.Reconcile s) {
            new MoneyChecks(this).reconciliation(s.repair());
            return new String[]{null, "reconciled"};
        }
        throw new IllegalArgumentException("unknown step " + step);
    }

    /**
     * After bootstrap: a split account whose opening Redis lost before the ledger had it, but one of whose
     * moves between buckets (the model leaves moves out) the ledger had, comes back from its ledger row, at
     * 0 once bootstrap completed the move. The contract allows it (the opening was acknowledged, then lost);
     * the model learns such an account here, and only at 0 everywhere.
     */
    private void zeroPhantoms() {
        for (Object k : (List<?>) redis.command("KEYS", layout.prefix() + "quota:*:acct:*")) {
            String account = layout.accountOf(String.valueOf(k));
            if (account == null || model.redis.containsKey(account)) {
                continue;
            }
            List<?> fields = (List<?>) redis.command("HGETALL", String.valueOf(k));
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                String name = String.valueOf(fields.get(i));
                if ((name.equals("balance") || name.equals("held")) && !String.valueOf(fields.get(i + 1)).equals("0")) {
                    throw new AssertionError("bootstrap loaded account " + account + ", which the model never saw"
                            + " persisted, with " + fields);
                }
            }
            model.redis.put(account, new MoneyModel.Account());
            model.ledger.put(account, new MoneyModel.Account());
        }
    }

    private static String[] pair(String expected, String actual) {
        return new String[]{expected, actual};
    }

    /** Whether an answer matches the model's, where {@code ?} stands for any one word. */
    static boolean matches(String expected, String actual) {
        String[] e = expected.split(" ");
        String[] a = actual.split(" ");
        if (e.length != a.length) {
            return false;
        }
        for (int i = 0; i < e.length; i++) {
            if (!e[i].equals("?") && !e[i].equals(a[i])) {
                return false;
            }
        }
        return true;
    }

    // ---- the steps' real halves ----

    private Outcome deduct(MoneyStep.Deduct s) throws Exception {
        Lease lease = s.token() == 0 ? null : new BelievedLease(quota.lockName(s.account()), s.token());
        return switch (s.via()) {
            case SYNC -> lease == null ? quota.deduct(s.account(), s.amount(), s.requestId())
                    : quota.deduct(s.account(), s.amount(), s.requestId(), lease);
            case ASYNC -> (lease == null ? quota.deductAsync(s.account(), s.amount(), s.requestId())
                    : quota.deductAsync(s.account(), s.amount(), s.requestId(), lease)).toCompletableFuture().get(20, TimeUnit.SECONDS);
            case BATCH -> lease == null ? quota.deductAll(List.of(new Deduction(s.account(), s.amount(), s.requestId()))).get(0)
                    : quota.deduct(s.account(), s.amount(), s.requestId(), lease);
        };
    }

    private String[] deductAll(MoneyStep.DeductAll s) {
        List<Deduction> batch = s.deductions().stream().map(d -> new Deduction(d.account(), d.amount(), d.requestId())).toList();
        List<Outcome> outcomes = new ArrayList<>();
        String actual = answer(() -> {
            outcomes.addAll(quota.deductAll(batch));
            return "BATCH";
        });
        List<String> expected = new ArrayList<>();
        List<MoneyModel.Event> events = new ArrayList<>();
        for (MoneyStep.Deduct d : s.deductions()) {
            expected.add(model.change("deduct", d.account(), d.amount(), d.requestId(), -1));
            events.add(model.lastEvent);
        }
        if (expected.contains("EXCEPTION DATA_LOST")) {
            return pair("EXCEPTION DATA_LOST", actual); // the batch throws its first failure
        }
        if (!actual.equals("BATCH")) {
            return pair(String.join(" | ", expected), actual);
        }
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < outcomes.size(); i++) {
            Outcome o = outcomes.get(i);
            if (o instanceof Outcome.Applied applied && events.get(i) != null) {
                events.get(i).entryId = applied.entryId();
            }
            answers.add(answer(o));
        }
        return pair(String.join(" | ", expected), String.join(" | ", answers));
    }

    /**
     * A change on both sides; the stream id the real call answered goes to the model's entry (a replay's
     * compensation is keyed by it).
     */
    private String[] withEntry(Call real, java.util.function.Supplier<String> modelHalf) {
        String actual = answer(real);
        String id = entryId;
        String expected = modelHalf.get();
        if (model.lastEvent != null && id != null) {
            model.lastEvent.entryId = id;
        }
        return pair(expected, actual);
    }

    private String applied(Outcome o) {
        if (o instanceof Outcome.Applied a) {
            entryId = a.entryId();
        }
        return answer(o);
    }

    /** The entry id of the last applied change a real call answered. */
    private String entryId;

    private interface Call {
        String call() throws Exception;
    }

    /** The call's answer as text; a thrown failure is an answer too. */
    private String answer(Call call) {
        entryId = null;
        try {
            return call.call();
        } catch (QuotaException e) {
            return "EXCEPTION " + e.reason();
        } catch (IllegalArgumentException e) {
            return "REFUSED IllegalArgumentException";
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause() instanceof QuotaException q ? "EXCEPTION " + q.reason() : "EXCEPTION " + e.getCause();
        } catch (Exception e) {
            throw new AssertionError("the call failed: " + e, e);
        }
    }

    static String answer(Outcome o) {
        if (o instanceof Outcome.Applied a) {
            return "APPLIED " + a.balance();
        }
        if (o instanceof Outcome.Duplicate d) {
            return "DUPLICATE " + d.original().balance();
        }
        if (o instanceof Outcome.Conflict c) {
            return "CONFLICT " + c.kind().wireName() + " " + c.amount();
        }
        if (o instanceof Outcome.Insufficient i) {
            return "INSUFFICIENT " + i.balance();
        }
        if (o instanceof Outcome.AccountNotFound n) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (o instanceof Outcome.InvalidAmount i) {
            return "INVALID_AMOUNT " + i.problem();
        }
        if (o instanceof Outcome.StaleFence f) {
            return "STALE_FENCE " + f.token() + " " + f.highWaterMark();
        }
        if (o instanceof Outcome.AccountExists e) {
            return "ACCOUNT_EXISTS " + e.balance();
        }
        throw new IllegalArgumentException("unknown outcome " + o);
    }

    static String answer(HoldOutcome o) {
        if (o instanceof HoldOutcome.Held h) {
            return "HELD " + h.available() + " " + h.held();
        }
        if (o instanceof HoldOutcome.Captured c) {
            return "CAPTURED " + c.captured() + " " + c.returned() + " " + c.available();
        }
        if (o instanceof HoldOutcome.Released r) {
            return "RELEASED " + r.returned() + " " + r.available();
        }
        if (o instanceof HoldOutcome.Expired e) {
            return "EXPIRED " + e.returned();
        }
        if (o instanceof HoldOutcome.Duplicate d) {
            return "DUPLICATE " + answer(d.original());
        }
        if (o instanceof HoldOutcome.Conflict c) {
            return "CONFLICT " + c.heldAmount();
        }
        if (o instanceof HoldOutcome.Insufficient i) {
            return "INSUFFICIENT " + i.available();
        }
        if (o instanceof HoldOutcome.UnknownHold u) {
            return "UNKNOWN_HOLD";
        }
        if (o instanceof HoldOutcome.ExceedsHold x) {
            return "EXCEEDS_HOLD " + x.held();
        }
        if (o instanceof HoldOutcome.AlreadyCaptured c) {
            return "ALREADY_CAPTURED " + c.captured();
        }
        if (o instanceof HoldOutcome.AlreadyReleased r) {
            return "ALREADY_RELEASED " + r.returned();
        }
        if (o instanceof HoldOutcome.AccountNotFound n) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (o instanceof HoldOutcome.InvalidAmount i) {
            return "INVALID_AMOUNT " + i.problem();
        }
        throw new IllegalArgumentException("unknown outcome " + o);
    }

    static String answer(PostingOutcome o) {
        if (o instanceof PostingOutcome.Posted p) {
            return "POSTED " + p.balances();
        }
        if (o instanceof PostingOutcome.Opened p) {
            return "OPENED " + p.balance();
        }
        if (o instanceof PostingOutcome.Duplicate d) {
            return "DUPLICATE " + d.original().balances();
        }
        if (o instanceof PostingOutcome.Conflict c) {
            return "CONFLICT " + c.kind().wireName();
        }
        if (o instanceof PostingOutcome.Insufficient i) {
            return "INSUFFICIENT " + i.balance() + " " + i.available();
        }
        if (o instanceof PostingOutcome.UnknownBalance u) {
            return "UNKNOWN_BALANCE " + u.balance();
        }
        if (o instanceof PostingOutcome.BalanceExists b) {
            return "BALANCE_EXISTS " + b.balance() + " " + b.amount();
        }
        if (o instanceof PostingOutcome.AccountNotFound n) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (o instanceof PostingOutcome.InvalidAmount i) {
            return "INVALID_AMOUNT " + i.balance() + " " + i.problem();
        }
        if (o instanceof PostingOutcome.InvalidPosting i) {
            return "INVALID_POSTING " + i.problem();
        }
        throw new IllegalArgumentException("unknown outcome " + o);
    }

    static String answer(SplitOutcome o) {
        if (o instanceof SplitOutcome.Split s) {
            return "SPLIT " + s.buckets();
        }
        if (o instanceof SplitOutcome.AlreadySplit s) {
            return "ALREADY_SPLIT " + s.buckets();
        }
        if (o instanceof SplitOutcome.Merged s) {
            return "MERGED " + s.buckets();
        }
        if (o instanceof SplitOutcome.NotSplit s) {
            return "NOT_SPLIT";
        }
        if (o instanceof SplitOutcome.AccountNotFound s) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (o instanceof SplitOutcome.TooLarge s) {
            return "TOO_LARGE " + s.total();
        }
        throw new IllegalArgumentException("unknown outcome " + o);
    }

    // ---- consumers and their faults ----

    /** Consumers on these partitions until nothing of them is left in the journal, then stopped. */
    void drain(Set<Integer> partitions) {
        Set<String> flaggedBefore = new java.util.HashSet<>(model.flagged);
        Set<String> uncertain = drainOnce(partitions);
        if (!uncertain.isEmpty()) {
            // Everything of those accounts reaches the ledger (their compensations too, wherever they landed), then
            // the model reads which of the documented outcomes happened.
            Set<Integer> all = new TreeSet<>(allPartitions());
            while (!drainOnce(all).isEmpty()) {
                // a compensation may race too: drain again
            }
            for (String account : uncertain) {
                learn(account, flaggedBefore.contains(account));
            }
        }
    }

    private Set<String> drainOnce(Set<Integer> partitions) {
        try (LedgerConsumer consumer = LedgerConsumer.builder(settings, database).consumerName("drain")
                .partitions(partitions).locks(locks).batchSize(50).blockTime(Duration.ofMillis(20))
                .sweepInterval(Duration.ofMillis(50)).rebalanceInterval(Duration.ofMillis(50))
                .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(200)).lagInterval(Duration.ofSeconds(30)).start()) {
            Support.await(Duration.ofSeconds(30), "consumers drain partitions " + partitions,
                    () -> consumer.backlog() == 0 && consumer.partitions().containsAll(partitions));
        }
        for (int p : partitions) {
            drains.merge(p, 1, Integer::sum);
        }
        return model.drain(partitions);
    }

    /**
     * The model learns an account's figures on both sides after a drain whose order it cannot say (see
     * {@link MoneyModel#drain}), and whether a refusal awaits a person; the invariants still hold from here on.
     */
    private void learn(String account, boolean flaggedBefore) {
        MoneyModel.Account inRedis = null;
        java.util.OptionalLong balance = quota.balance(account);
        if (balance.isPresent()) {
            inRedis = new MoneyModel.Account();
            inRedis.available = balance.getAsLong();
            Object held = redis.command("HGET", layout.accountKey(account), "held");
            inRedis.held = held == null ? 0 : Long.parseLong(String.valueOf(held));
            inRedis.named.putAll(quota.balances(account).orElse(new java.util.TreeMap<>()));
        }
        MoneyModel.Account inLedger = null;
        boolean needsAPerson;
        try (Connection c = database.getConnection()) {
            try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT balance, held FROM ledger_accounts WHERE account = ?")) {
                ps.setString(1, account);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        inLedger = new MoneyModel.Account();
                        inLedger.available = rs.getLong(1);
                        inLedger.held = rs.getLong(2);
                    }
                }
            }
            if (inLedger != null) {
                try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT name, amount FROM ledger_balances WHERE account = ?")) {
                    ps.setString(1, account);
                    try (java.sql.ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            inLedger.named.put(rs.getString(1), rs.getLong(2));
                        }
                    }
                }
            }
            try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT (SELECT COUNT(*) FROM ledger_quarantine WHERE account = ?"
                    + " AND resolved_at IS NULL) + (SELECT COUNT(*) FROM ledger_compensations WHERE account = ? AND outcome IS NOT NULL"
                    + " AND outcome NOT IN ('APPLIED', 'DUPLICATE') AND resolved_at IS NULL)")) {
                ps.setString(1, account);
                ps.setString(2, account);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    needsAPerson = rs.getLong(1) > 0;
                }
            }
        } catch (SQLException e) {
            throw new AssertionError("could not read the ledger", e);
        }
        model.learn(account, inRedis, inLedger, needsAPerson || flaggedBefore);
    }

    private String[] ghostRead(int p) {
        if (model.lost || ghosts.containsKey(p)) {
            return null;
        }
        String stream = layout.journal(p);
        if (!"1".equals(String.valueOf(redis.command("EXISTS", stream)))) {
            return null;
        }
        try {
            redis.command("XGROUP", "CREATE", stream, GROUP, "0", "MKSTREAM");
        } catch (RuntimeException busy) {
            // the group exists
        }
        Object reply = redis.command("XREADGROUP", "GROUP", GROUP, "ghost", "COUNT", "10000", "STREAMS", stream, ">");
        List<BatchWriter.Raw> raws = new ArrayList<>();
        if (reply instanceof List<?> streams && !streams.isEmpty()) {
            for (Object message : (List<?>) ((List<?>) streams.get(0)).get(1)) {
                List<?> m = (List<?>) message;
                List<?> body = (List<?>) m.get(1);
                Map<String, String> fields = new java.util.LinkedHashMap<>();
                for (int i = 0; i + 1 < body.size(); i += 2) {
                    fields.put(String.valueOf(body.get(i)), String.valueOf(body.get(i + 1)));
                }
                raws.add(new BatchWriter.Raw(String.valueOf(m.get(0)), fields));
            }
        }
        List<MoneyModel.Event> events = model.deliver(p);
        ghosts.put(p, new Ghost(recordedToken(stream), drains.getOrDefault(p, 0), raws, events));
        // The model leaves out moves between buckets (net zero for their account): count the rest.
        long changes = raws.stream().filter(r -> !String.valueOf(r.fields().get("kind")).startsWith("move")).count();
        return pair("READ " + events.size(), "READ " + changes);
    }

    private String[] ghostCommit(int p) {
        Ghost ghost = ghosts.remove(p);
        if (ghost == null || ghost.token < 0 || ghost.raws.isEmpty()) {
            return null;
        }
        boolean superseded = drains.getOrDefault(p, 0) > ghost.drainsBefore;
        String stream = layout.journal(p);
        String actual;
        try (Connection c = database.getConnection()) {
            // Read new by the ghost, so written as the consumer writes fresh entries: without the key lookup first.
            new BatchWriter(dialect, layout).write(c, new BatchWriter.Part(p, stream,
                    new PartitionFence(stream, ghost.token, "ghost"), ghost.raws, true), Duration.ofSeconds(5));
            actual = "COMMITTED";
        } catch (PartitionFence.FencedOut e) {
            actual = "FENCED";
        } catch (SQLException e) {
            throw new AssertionError("the frozen consumer's write failed: " + e, e);
        }
        if (!superseded) {
            model.persistOnly(ghost.events);
        }
        return pair(superseded ? "FENCED" : "COMMITTED", actual);
    }

    private long recordedToken(String stream) {
        try (Connection c = database.getConnection(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT token FROM ledger_partitions WHERE stream = ?")) {
            ps.setString(1, stream);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** Every record with a lifetime (idempotency, postings, given moves, ended holds) expires now. */
    private void retentionPasses() {
        for (Object k : (List<?>) redis.command("KEYS", layout.prefix() + "quota:*")) {
            String key = String.valueOf(k);
            if ((key.contains(":req:") || key.contains(":post:") || key.contains(":moved:") || key.contains(":hold:"))
                    && Long.parseLong(String.valueOf(redis.command("PTTL", key))) > 0) {
                redis.command("DEL", key);
            }
        }
    }

    /**
     * What a process dying in the middle of a move between buckets leaves: the take done at bucket
     * {@code from} and, when {@code given}, the give at bucket 0, without the finish. Runs the engine's own
     * script with its own arguments, as that process would have.
     */
    private String[] cutMove(MoneyStep.CutMove s) {
        MoneyModel.Account a = model.redis.get(s.account());
        if (model.lost || a == null || a.buckets < 2 || s.from() < 1) {
            return null;
        }
        int from = 1 + (s.from() - 1) % (a.buckets - 1); // one of the other buckets, whatever the split
        String id = "cut-" + (++cuts);
        String n = Integer.toString(a.buckets);
        List<?> taken = bucketCall("take", s.account(), from,
                List.of(layout.journal(layout.bucketPartition(s.account(), from)), layout.movesKey(s.account(), from)),
                n, id, "0", Long.toString(s.amount()), "1");
        if (!"taken".equals(String.valueOf(taken.get(0)))) {
            throw new AssertionError("the cut move's take answered " + taken);
        }
        String amount = String.valueOf(taken.get(1));
        if (s.given() && !amount.equals("0")) {
            List<?> given = bucketCall("give", s.account(), 0,
                    List.of(layout.journal(layout.bucketPartition(s.account(), 0)), layout.movedKey(s.account(), 0, id)),
                    id, amount);
            if (!"given".equals(String.valueOf(given.get(0)))) {
                throw new AssertionError("the cut move's give answered " + given);
            }
        }
        return new String[]{null, "cut " + amount};
    }

    private List<?> bucketCall(String op, String account, int index, List<String> keys, String... args) {
        List<String> allKeys = new ArrayList<>(List.of(layout.marker(layout.bucketPartition(account, index)),
                layout.bucketKey(account, index)));
        allKeys.addAll(keys);
        List<String> allArgs = new ArrayList<>(List.of(op, account, Integer.toString(index), layout.markerValue()));
        allArgs.addAll(List.of(args));
        return (List<?>) redis.command(Scripts.eval(Scripts.Script.BUCKETS, allKeys, allArgs));
    }

    // ---- plumbing ----

    QuotaService quota() {
        return quota;
    }

    Reconciler reconciler() {
        return reconciler;
    }

    List<Integer> allPartitions() {
        return IntStream.range(0, PARTITIONS).boxed().collect(Collectors.toList());
    }

    private void closeQuota() {
        if (quota != null) {
            quota.close();
            quota = null;
        }
    }

    @Override
    public void close() {
        closeQuota();
        reconciler.close();
        locks.close();
        try {
            closeDatabase.close();
        } catch (Exception e) {
            throw new AssertionError("could not close the ledger database", e);
        }
    }
}
