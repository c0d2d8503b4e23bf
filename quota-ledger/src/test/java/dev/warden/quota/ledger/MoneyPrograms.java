package dev.warden.quota.ledger;

import dev.warden.quota.ledger.MoneyStep.Price;
import dev.warden.quota.ledger.MoneyStep.Via;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Generated programs over three accounts in four partitions (two accounts share one, a split account's
 * buckets spread over all four): every public operation, request and hold ids drawn from small pools so
 * that retries, conflicts and reuse after the retention come often, and the faults and recovery tools
 * between them. jqwik shrinks a failing program to the fewest, simplest steps.
 */
final class MoneyPrograms {

    private MoneyPrograms() {
    }

    static Arbitrary<List<MoneyStep>> programs() {
        return step().list().ofMinSize(4).ofMaxSize(36);
    }

    private static Arbitrary<String> account() {
        return Arbitraries.of(MoneySystem.ACCOUNTS);
    }

    private static Arbitrary<String> requestId() {
        return Arbitraries.of("r1", "r2", "r3", "r4", "r5", "r6");
    }

    private static Arbitrary<String> holdId() {
        return Arbitraries.of("h1", "h2", "h3");
    }

    private static Arbitrary<Long> amount() {
        return Arbitraries.longs().between(1, 120);
    }

    @SuppressWarnings("unchecked")
    static Arbitrary<MoneyStep> step() {
        Arbitrary<MoneyStep> open = Combinators.combine(account(), Arbitraries.longs().between(0, 300)).as(MoneyStep.Open::new);
        Arbitrary<MoneyStep> credit = Combinators.combine(account(), amount(), requestId(), Arbitraries.of(false, false, true))
                .as(MoneyStep.Credit::new);
        Arbitrary<MoneyStep> deduct = Combinators.combine(account(), amount(), requestId(), Arbitraries.of(Via.class),
                Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(0L)), Tuple.of(2, Arbitraries.longs().between(1, 4))))
                .as(MoneyStep.Deduct::new);
        Arbitrary<MoneyStep> deductAll = Arbitraries.subsetOf(MoneySystem.ACCOUNTS).ofMinSize(2)
                .flatMap(accounts -> Combinators.combine(amount().list().ofSize(accounts.size()),
                        requestId().list().ofSize(accounts.size())).as((amounts, ids) -> {
                            List<MoneyStep.Deduct> ds = new ArrayList<>();
                            int i = 0;
                            for (String a : new TreeSet<>(accounts)) {
                                ds.add(new MoneyStep.Deduct(a, amounts.get(i), ids.get(i), Via.BATCH, 0));
                                i++;
                            }
                            return new MoneyStep.DeductAll(ds);
                        }));
        Arbitrary<MoneyStep> charge = Combinators.combine(account(), requestId(), Arbitraries.of(Price.class))
                .as(MoneyStep.Charge::new);
        Arbitrary<MoneyStep> hold = Combinators.combine(account(), amount(), holdId(), Arbitraries.of(1_000L, 60_000L))
                .as(MoneyStep.Hold::new);
        Arbitrary<MoneyStep> capture = Combinators.combine(account(), holdId(), amount()).as(MoneyStep.Capture::new);
        Arbitrary<MoneyStep> release = Combinators.combine(account(), holdId()).as(MoneyStep.Release::new);
        Arbitrary<MoneyStep> chargeHold = Combinators.combine(account(), holdId(), Arbitraries.of(Price.class))
                .as(MoneyStep.ChargeHold::new);
        Arbitrary<MoneyStep> advance = Combinators.combine(Arbitraries.of(500L, 2_000L, 70_000L), Arbitraries.of(true, false))
                .as(MoneyStep.Advance::new);
        Arbitrary<MoneyStep> openBalance = Combinators.combine(account(), Arbitraries.of("pts", "cpn"))
                .as(MoneyStep.OpenBalance::new);
        Arbitrary<MoneyStep> post = Combinators.combine(account(), requestId(),
                Arbitraries.maps(Arbitraries.of("pts", "cpn"), Arbitraries.longs().between(-60, 80).filter(v -> v != 0))
                        .ofMinSize(1).ofMaxSize(2)).as(MoneyStep.Post::new);
        Arbitrary<MoneyStep> split = Combinators.combine(account(), Arbitraries.integers().between(2, MoneySystem.PARTITIONS + 1))
                .as(MoneyStep.Split::new);
        Arbitrary<MoneyStep> merge = account().map(MoneyStep.Merge::new);
        Arbitrary<MoneyStep> balance = account().map(MoneyStep.Balance::new);
        Arbitrary<MoneyStep> cut = Combinators.combine(account(), Arbitraries.integers().between(1, 3), amount(),
                Arbitraries.of(true, false)).as(MoneyStep.CutMove::new);
        Arbitrary<MoneyStep> drain = Arbitraries.subsetOf(0, 1, 2, 3).ofMinSize(1)
                .map(ps -> new MoneyStep.Drain(new ArrayList<>(new TreeSet<>(ps))));
        Arbitrary<MoneyStep> ghostRead = Arbitraries.integers().between(0, MoneySystem.PARTITIONS - 1).map(MoneyStep.GhostRead::new);
        Arbitrary<MoneyStep> ghostCommit = Arbitraries.integers().between(0, MoneySystem.PARTITIONS - 1).map(MoneyStep.GhostCommit::new);
        Arbitrary<MoneyStep> again = Combinators.combine(Arbitraries.integers().between(1, 4), Arbitraries.of(false, false, true))
                .as(MoneyStep.Again::new);
        Arbitrary<MoneyStep> retention = Arbitraries.just(new MoneyStep.RetentionPasses());
        Arbitrary<MoneyStep> loss = Arbitraries.just(new MoneyStep.DataLoss());
        Arbitrary<MoneyStep> bootstrap = Arbitraries.just(new MoneyStep.Bootstrap());
        Arbitrary<MoneyStep> reconcile = Arbitraries.of(false, true).map(MoneyStep.Reconcile::new);
        return Arbitraries.frequencyOf(
                Tuple.of(10, open), Tuple.of(9, credit), Tuple.of(14, deduct), Tuple.of(2, deductAll), Tuple.of(4, charge),
                Tuple.of(6, hold), Tuple.of(4, capture), Tuple.of(3, release), Tuple.of(2, chargeHold), Tuple.of(3, advance),
                Tuple.of(3, openBalance), Tuple.of(4, post), Tuple.of(4, split), Tuple.of(2, merge), Tuple.of(3, balance),
                Tuple.of(4, cut), Tuple.of(8, drain), Tuple.of(2, ghostRead), Tuple.of(2, ghostCommit),
                Tuple.of(8, again), Tuple.of(4, retention), Tuple.of(2, loss), Tuple.of(3, bootstrap), Tuple.of(3, reconcile));
    }
}
