package dev.warden.lock.zookeeper.internal;

import org.apache.curator.RetrySleeper;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("ZooKeeper retries: within the request timeout, and no recursion after giving up")
class RetryWithinDeadlineTest {

    /** Stands for Curator's queued background operation, which is a Delayed sleeper. */
    static final class BackgroundOperation implements RetrySleeper, Delayed {
        final List<Long> sleeps = new ArrayList<>();

        @Override
        public void sleepFor(long time, TimeUnit unit) {
            sleeps.add(unit.toMillis(time));
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return 0;
        }
    }

    @Test
    void retriesUntilTheRequestTimeout() {
        RetryWithinDeadline policy = new RetryWithinDeadline(500, 50);
        BackgroundOperation op = new BackgroundOperation();
        assertThat(policy.allowRetry(0, 100, op)).isTrue();
        assertThat(policy.allowRetry(1, 499, op)).isTrue();
        assertThat(policy.allowRetry(2, 600, op)).as("given up once the timeout has passed").isFalse();
    }

    @Test
    void aBackgroundOperationResubmittedAfterGivingUpWaitsInsteadOfRecursing() {
        RetryWithinDeadline policy = new RetryWithinDeadline(500, 50);
        BackgroundOperation op = new BackgroundOperation();
        assertThat(policy.allowRetry(5, 900, op)).isFalse();
        assertThat(policy.allowRetry(6, 900, op)).as("asked again: queued with a delay").isTrue();
        assertThat(policy.allowRetry(7, 2_000, op)).isTrue();
        assertThat(op.sleeps).filteredOn(ms -> ms == RetryWithinDeadline.STRAGGLER_SLEEP_MS).as("each re-ask waits")
                .hasSize(2);
        assertThat(op.sleeps.get(op.sleeps.size() - 1)).isEqualTo(RetryWithinDeadline.STRAGGLER_SLEEP_MS);
        BackgroundOperation other = new BackgroundOperation();
        assertThat(policy.allowRetry(5, 900, other)).as("another operation gives up once too").isFalse();
    }

    @Test
    void aForegroundLoopAlwaysGivesUpAfterTheTimeout() {
        RetryWithinDeadline policy = new RetryWithinDeadline(500, 50);
        RetrySleeper shared = (time, unit) -> { };
        assertThat(policy.allowRetry(3, 700, shared)).isFalse();
        assertThat(policy.allowRetry(3, 700, shared)).isFalse();
    }
}
