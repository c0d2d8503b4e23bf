package dev.warden.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class RetryWhileRefusedTest {

    /** Runs each delayed task at once, recording the delays asked for. */
    private final List<Long> delays = new ArrayList<>();
    private final RetryWhileRefused.Delay now = (task, nanos) -> {
        delays.add(TimeUnit.NANOSECONDS.toMillis(nanos));
        task.run();
        return true;
    };

    private static CompletableFuture<String> refused(String code) {
        return CompletableFuture.failedFuture(new RedisCommandExecutionException(code + " not now"));
    }

    @Test
    void aRefusalIsSentAgainWithADoublingBackoffUntilItRuns() {
        AtomicInteger calls = new AtomicInteger();
        List<Throwable> told = new ArrayList<>();
        CompletableFuture<String> r = RetryWhileRefused.run(n -> {
            calls.incrementAndGet();
            return n < 6 ? refused(n % 2 == 0 ? "TRYAGAIN" : "LOADING") : CompletableFuture.completedFuture("ran at " + n);
        }, false, System.nanoTime() + TimeUnit.SECONDS.toNanos(10), now, told::add);
        assertThat(r).isCompletedWithValue("ran at 6");
        assertThat(calls).hasValue(7);
        assertThat(told).hasSize(6);
        assertThat(delays).containsExactly(5L, 10L, 20L, 40L, 80L, 100L);
    }

    @Test
    void anErrorThatRanOrCannotWorkIsNotSentAgain() {
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<String> r = RetryWhileRefused.run(n -> {
            calls.incrementAndGet();
            return refused("ERR wrong number of arguments");
        }, true, System.nanoTime() + TimeUnit.SECONDS.toNanos(10), now, e -> { });
        assertThat(r).isCompletedExceptionally();
        assertThat(calls).hasValue(1);
        assertThat(delays).isEmpty();
    }

    @Test
    void atTheDeadlineTheLastRefusalFailsTheCall() {
        CompletableFuture<String> r = RetryWhileRefused.run(n -> refused("CLUSTERDOWN"), false, System.nanoTime(), now, e -> { });
        assertThat(r).failsWithin(java.time.Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(RedisCommandExecutionException.class).withMessageStartingWith("CLUSTERDOWN");
        assertThat(delays).isEmpty();
    }

    @Test
    void aStoppedTimerEndsTheRetries() {
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<String> r = RetryWhileRefused.run(n -> {
            calls.incrementAndGet();
            return refused("TRYAGAIN");
        }, false, System.nanoTime() + TimeUnit.SECONDS.toNanos(10), (task, nanos) -> false, e -> { });
        assertThat(r).isCompletedExceptionally();
        assertThat(calls).hasValue(1);
    }
}
