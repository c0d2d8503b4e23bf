package dev.warden.lock.internal;

import dev.warden.lock.spi.Grant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalQueueTest {

    private static final Grant GRANT = () -> 7;

    @Test
    @DisplayName("turns pass in arrival order, skipping those who left, and a permit passes once")
    void order() {
        LocalQueue q = new LocalQueue();
        CompletableFuture<LocalQueue.Turn> first = q.enter("n", "a");
        CompletableFuture<LocalQueue.Turn> second = q.enter("n", "b");
        CompletableFuture<LocalQueue.Turn> third = q.enter("n", "c");
        CompletableFuture<LocalQueue.Turn> other = q.enter("other", "d");
        assertThat(first).isDone();
        assertThat(other).isDone();
        assertThat(second).isNotDone();
        q.leave("n", second);
        LocalQueue.Permit permit = first.join().permit();
        permit.run();
        permit.run();
        assertThat(third).isDone();
        assertThat(third.join().grant()).isNull();
        third.join().permit().run();
        assertThat(q.isBusy("n")).isFalse();
        other.join().permit().run();
        assertThat(q.isBusy("other")).isFalse();
    }

    @Test
    @DisplayName("a permit hands the turn with a grant to the next live waiter, once")
    void handOff() {
        LocalQueue q = new LocalQueue();
        LocalQueue.Permit permit = q.enter("n", "a").join().permit();
        CompletableFuture<LocalQueue.Turn> gone = q.enter("n", "b");
        CompletableFuture<LocalQueue.Turn> next = q.enter("n", "c");
        gone.cancel(false);
        LocalQueue.Waiter claimed = permit.claimNext();
        assertThat(claimed.owner()).isEqualTo("c");
        assertThat(permit.handTo(claimed, GRANT, 42)).isTrue();
        assertThat(next.join().grant()).isSameAs(GRANT);
        assertThat(next.join().grantSentAtNanos()).isEqualTo(42);
        assertThatThrownBy(() -> permit.handTo(claimed, GRANT, 42)).isInstanceOf(IllegalStateException.class);
        permit.run();
        assertThat(q.isBusy("n")).as("the used permit passed nothing on").isTrue();
        next.join().permit().run();
        assertThat(q.isBusy("n")).isFalse();
    }

    @Test
    @DisplayName("a claimed waiter goes back to the head when the hand-off does not happen, or is skipped if it left")
    void unclaim() {
        LocalQueue q = new LocalQueue();
        LocalQueue.Permit permit = q.enter("n", "a").join().permit();
        CompletableFuture<LocalQueue.Turn> b = q.enter("n", "b");
        CompletableFuture<LocalQueue.Turn> c = q.enter("n", "c");
        LocalQueue.Waiter claimed = permit.claimNext();
        permit.unclaim(claimed);
        permit.run();
        assertThat(b).isDone();
        assertThat(b.join().grant()).isNull();

        LocalQueue.Permit second = b.join().permit();
        LocalQueue.Waiter claimedC = second.claimNext();
        c.cancel(false);
        assertThat(second.handTo(claimedC, GRANT, 1)).as("the waiter left while the hand-off was on the wire").isFalse();
        assertThat(q.isBusy("n")).isFalse();
    }
}
