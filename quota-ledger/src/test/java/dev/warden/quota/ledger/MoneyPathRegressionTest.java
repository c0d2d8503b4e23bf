package dev.warden.quota.ledger;

import dev.warden.quota.ledger.MoneyStep.Balance;
import dev.warden.quota.ledger.MoneyStep.Bootstrap;
import dev.warden.quota.ledger.MoneyStep.Charge;
import dev.warden.quota.ledger.MoneyStep.ChargeHold;
import dev.warden.quota.ledger.MoneyStep.Credit;
import dev.warden.quota.ledger.MoneyStep.CutMove;
import dev.warden.quota.ledger.MoneyStep.DataLoss;
import dev.warden.quota.ledger.MoneyStep.Deduct;
import dev.warden.quota.ledger.MoneyStep.Drain;
import dev.warden.quota.ledger.MoneyStep.GhostCommit;
import dev.warden.quota.ledger.MoneyStep.GhostRead;
import dev.warden.quota.ledger.MoneyStep.Hold;
import dev.warden.quota.ledger.MoneyStep.Merge;
import dev.warden.quota.ledger.MoneyStep.Open;
import dev.warden.quota.ledger.MoneyStep.OpenBalance;
import dev.warden.quota.ledger.MoneyStep.Post;
import dev.warden.quota.ledger.MoneyStep.Price;
import dev.warden.quota.ledger.MoneyStep.Reconcile;
import dev.warden.quota.ledger.MoneyStep.Release;
import dev.warden.quota.ledger.MoneyStep.RetentionPasses;
import dev.warden.quota.ledger.MoneyStep.Split;
import dev.warden.quota.ledger.MoneyStep.Via;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;

/**
 * The programs that found defects in the money path, each kept as its regression test: the items
 * (reproduced from the public API by hand first, then written as programs) and what {@link MoneyPathCheckTest}
 * found by itself. Each runs on the same real Redis and PostgreSQL as the checker and is judged by the same
 * {@link MoneyModel} and {@link MoneyChecks}; each failed before its fix.
 */
class MoneyPathRegressionTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private static MoneySystem system;

    @BeforeAll
    static void start() {
        system = new MoneySystem(redis.server(), postgres.server());
    }

    @AfterAll
    static void stop() {
        system.close();
    }

    private static void check(MoneyStep... steps) {
        system.check(List.of(steps));
    }

    private static final List<Integer> ALL = List.of(0, 1, 2, 3);
    private static final long HOUR = 3_600_000;

    @Test
    @DisplayName("item 1: after Redis lost its data, bootstrap brings an open hold back: its quota stays held, not spendable twice")
    void holdsComeBackWithBootstrap() {
        check(new Open("a", 100), new Hold("a", 60, "h1", HOUR), new Drain(ALL), new DataLoss(), new Bootstrap(),
                new Deduct("a", 70, "d1", Via.SYNC, 0), new MoneyStep.Capture("a", "h1", 60));
    }

    @Test
    @DisplayName("item 2: a repair before bootstrap is refused, so bootstrap still restores named balances")
    void repairBeforeBootstrapIsRefused() {
        check(new Open("a", 100), new OpenBalance("a", "pts"), new Post("a", "g1", Map.of("pts", 50L)), new Drain(ALL),
                new DataLoss(), new Reconcile(true), new Bootstrap(), new Post("a", "p2", Map.of("pts", -10L)));
    }

    @Test
    @DisplayName("item 3: a move cut before its finish and settled after the retention is given once")
    void cutMoveGivenOnce() {
        check(new Open("a", 8_000), new Split("a", 2), new CutMove("a", 1, 1_000, true), new RetentionPasses(),
                new Balance("a"));
    }

    @Test
    @DisplayName("item 4: a split account's bucket entries consumed before its opening reach the ledger whole")
    void bucketEntriesBeforeTheOpening() {
        check(new Open("a", 100_000), new Split("a", 4), new Drain(List.of(0, 1, 2)), new Reconcile(false), new Drain(ALL));
    }

    @Test
    @DisplayName("item 5: a replayed top-up whose compensation Redis refuses is reported, never clean")
    void refusedCompensationIsReported() {
        check(new Open("a", 0), new Credit("a", 50, "t1", false), new Drain(ALL), new RetentionPasses(),
                new Credit("a", 50, "t1", false), new Deduct("a", 100, "d1", Via.SYNC, 0), new Drain(ALL),
                new Reconcile(false), new Reconcile(true));
    }

    @Test
    @DisplayName("item 6: unresolved quarantine is never clean, and repair refuses to write over it")
    void quarantineIsNeverClean() {
        check(new Open("a", 100), new Hold("a", 60, "h1", HOUR), new Release("a", "h1"), new Drain(ALL),
                new RetentionPasses(), new Hold("a", 60, "h1", HOUR), new Drain(ALL), new Reconcile(false),
                new Reconcile(true));
    }

    @Test
    @DisplayName("item 7: on a split account, one request id with and without its lease reaches one bucket and applies once")
    void fencedAndUnfencedRetryApplyOnce() {
        check(new Open("a", 10_000), new Split("a", 2), new Deduct("a", 10, "r4", Via.SYNC, 1),
                new Deduct("a", 10, "r4", Via.SYNC, 0), new Deduct("a", 10, "r4", Via.ASYNC, 2));
    }

    @Test
    @DisplayName("item 8: a charge retried after a timeout answers Duplicate, without pricing again")
    void chargeRetryIsDuplicate() {
        check(new Open("a", 100), new Charge("a", "c1", Price.HALF), new Charge("a", "c1", Price.HALF));
    }

    @Test
    @DisplayName("item 10: a merged account leaves no bucket key behind")
    void mergeLeavesNoBuckets() {
        check(new Open("a", 10), new Split("a", 3), new Deduct("a", 4, "r4", Via.SYNC, 0), new Merge("a"));
    }

    @Test
    @DisplayName("item 11: a split into more buckets than partitions is refused (two buckets would share one partition's keys)")
    void splitBoundedByPartitions() {
        check(new Open("a", 100), new Split("a", 5), new Split("a", 4), new Deduct("a", 30, "r1", Via.SYNC, 0), new Merge("a"));
    }

    @Test
    @DisplayName("item 11: bootstrap restores the fence mark, so a superseded lock holder stays refused after Redis lost its data")
    void bootstrapRestoresTheFence() {
        check(new Open("a", 100), new Deduct("a", 10, "r1", Via.SYNC, 5), new Drain(ALL), new DataLoss(), new Bootstrap(),
                new Deduct("a", 10, "r2", Via.SYNC, 3));
    }

    @Test
    @DisplayName("found by the checker: a charge on a hold in a partition that lost its marker is DATA_LOST, not 'unknown hold'")
    void chargeHoldSeesDataLoss() {
        check(new Open("a", 10), new ChargeHold("b", "h1", Price.TEN), new DataLoss(), new ChargeHold("a", "h1", Price.TEN));
    }

    @Test
    @DisplayName("found by the checker: reconciliation of a split account whose opening is still in flight is clean")
    void splitAccountOpeningInFlight() {
        check(new Open("a", 0), new Split("a", 2), new Reconcile(false));
    }

    @Test
    @DisplayName("found by the checker: a move half in the ledger when Redis lost its data is completed by bootstrap")
    void halfMoveCompletedByBootstrap() {
        check(new Open("b", 2), new Split("b", 2), new Drain(List.of(1)), new DataLoss(), new Bootstrap());
    }

    @Test
    @DisplayName("found by the checker: a move whose 'movein' alone reached the ledger is taken back by bootstrap (the account at 0, not 1)")
    void halfMoveInTakenBack() {
        check(new Open("b", 2), new Split("b", 2), new Drain(List.of(2)), new DataLoss(), new Bootstrap(), new Balance("b"));
    }

    @Test
    @DisplayName("found by the checker: a request id reused by another kind across a split reaches the ledger from two streams; either"
            + " order ends compensated or reported")
    void reusedIdAcrossASplitFromTwoStreams() {
        check(new Open("c", 0), new Credit("c", 1, "r4", false), new Split("c", 2), new Deduct("c", 1, "r4", Via.SYNC, 0),
                new Drain(ALL), new Reconcile(false));
        check(new Open("a", 0), new Credit("a", 1, "r6", false), new Split("a", 2), new Credit("a", 2, "r6", false),
                new Deduct("a", 2, "r1", Via.SYNC, 0), new Drain(ALL), new Reconcile(false));
    }

    @Test
    @DisplayName("review: a merged account whose last move is in flight on a former bucket's stream is not repaired from half a move")
    void mergedAccountMoveInFlightIsNotRepaired() {
        check(new Open("b", 100), new Split("b", 2), new Drain(ALL), new Merge("b"), new Drain(List.of(1)), new Reconcile(true),
                new Reconcile(false));
    }

    @Test
    @DisplayName("review: a bootstrap run again after stopping before its markers completes a half move once")
    void bootstrapRunAgainSettlesOnce() {
        system.reset();
        for (MoneyStep step : List.of(new Open("b", 2), new Split("b", 2), new Drain(List.of(1)), new DataLoss(), new Bootstrap())) {
            system.run(step);
        }
        // It stopped before its markers (they are gone again), and no consumer ran: run it again.
        for (int p = 0; p < MoneySystem.PARTITIONS; p++) {
            system.redis.command("DEL", system.layout.marker(p));
        }
        system.run(new Bootstrap());
        system.run(new Balance("b"));
        new MoneyChecks(system).atTheEnd();
    }

    @Test
    @DisplayName("review: a compensation made and persisted whose outcome a crash lost is not made again by bootstrap")
    void madeCompensationNotMadeAgain() throws Exception {
        system.reset();
        for (MoneyStep step : List.of(new Open("a", 100), new Deduct("a", 30, "d1", Via.SYNC, 0), new Drain(ALL),
                new RetentionPasses(), new Deduct("a", 30, "d1", Via.SYNC, 0), new Drain(ALL))) {
            system.run(step);
        }
        try (java.sql.Connection c = system.database.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE ledger_compensations SET outcome = NULL"); // the consumer died before recording it
        }
        for (MoneyStep step : List.of(new DataLoss(), new Bootstrap(), new Balance("a"))) {
            system.run(step);
        }
        new MoneyChecks(system).atTheEnd();
    }

    @Test
    @DisplayName("a replay the ledger applied and had not undone in Redis when Redis lost its data is undone by bootstrap")
    void owedCompensationMadeByBootstrap() {
        check(new Open("a", 100), new Deduct("a", 30, "d1", Via.SYNC, 0), new Drain(ALL), new RetentionPasses(),
                new Deduct("a", 30, "d1", Via.SYNC, 0), new GhostRead(3), new GhostCommit(3), new DataLoss(),
                new Bootstrap(), new Balance("a"));
    }
}
