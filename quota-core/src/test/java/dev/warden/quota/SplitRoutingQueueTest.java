package dev.warden.quota;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The asynchronous deductions of split accounts wait in a bounded line (docs/quota.md's memory claim): 16 run
 * at once and 10,000 wait; beyond, a deduction fails at once, sent nowhere, and its retry applies it once.
 */
class SplitRoutingQueueTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** The routing pool's threads and its line (Deductions' SPLIT_ROUTING_THREADS and SPLIT_ROUTING_QUEUE). */
    static final int CAPACITY = 16 + 10_000;
    static final int BEYOND = 50;

    @Test
    @DisplayName("a full line refuses at once (UNAVAILABLE, while Redis is frozen), and every deduction retried with its id applies exactly once")
    void fullLineRefusesAtOnce() throws Exception {
        try (QuotaService q = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.request-timeout", "10s")))) {
            String account = "hot-" + UUID.randomUUID();
            long opening = 1_000_000;
            assertThat(q.open(account, opening).isApplied()).isTrue();
            assertThat(q.split(account, 4)).isEqualTo(new SplitOutcome.Split(4));
            assertThat(q.deduct(account, 1, "warm").isApplied()).isTrue(); // the service knows the split now

            List<CompletableFuture<Outcome>> calls = new ArrayList<>();
            CountDownLatch failed = new CountDownLatch(BEYOND); // counts answers that are failures
            redis.server().pause(); // the running 16 block on Redis (for up to the 10 s timeout): the line fills and stays full
            try {
                for (int i = 0; i < CAPACITY + BEYOND; i++) {
                    CompletableFuture<Outcome> call = q.deductAsync(account, 1, "q" + i).toCompletableFuture();
                    call.whenComplete((outcome, error) -> {
                        if (error != null) {
                            failed.countDown();
                        }
                    });
                    calls.add(call);
                }
                // Those beyond the line are refused while Redis cannot answer anything (their answers reach the caller
                // on the service's own threads, so wait for them; nothing else can end before Redis is back).
                assertThat(failed.await(5, TimeUnit.SECONDS)).as("%d refusals within 5 s", BEYOND).isTrue();
                List<Integer> refused = refused(calls);
                assertThat(refused).hasSize(BEYOND);
                assertThat(calls.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally())).isEmpty();
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> calls.get(refused.get(0)).get());
                assertThat(e.getCause()).isInstanceOfSatisfying(QuotaException.class, x -> {
                    assertThat(x.reason()).isEqualTo(QuotaException.Reason.UNAVAILABLE);
                    assertThat(x.getMessage()).contains("10000 deductions of split accounts are already waiting")
                            .contains("retry it with its request id");
                });
            } finally {
                redis.server().resume();
            }
            for (CompletableFuture<Outcome> call : calls) {
                try {
                    call.get(60, TimeUnit.SECONDS); // applied, or refused
                } catch (ExecutionException ignored) {
                    // its retry below settles it
                }
            }
            // Each request id once more: Applied if it never was, Duplicate if it was. Then every one of them is
            // applied exactly once: none twice (a refused one was sent nowhere), none lost.
            for (int i = 0; i < calls.size(); i++) {
                assertThat(q.deduct(account, 1, "q" + i)).as("retry of q%d", i)
                        .isInstanceOfAny(Outcome.Applied.class, Outcome.Duplicate.class);
            }
            assertThat(q.balance(account)).hasValue(opening - 1 - CAPACITY - BEYOND);
        }
    }

    private static List<Integer> refused(List<CompletableFuture<Outcome>> calls) {
        List<Integer> refused = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            if (calls.get(i).isCompletedExceptionally()) {
                refused.add(i);
            }
        }
        return refused;
    }
}
