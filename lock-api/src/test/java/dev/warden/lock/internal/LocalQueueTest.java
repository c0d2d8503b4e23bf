package dev.warden.lock.internal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class LocalQueueTest {

    @Test
    @DisplayName("turns pass in arrival order, skipping those who left, and a permit passes once")
    void order() {
        LocalQueue q = new LocalQueue();
        CompletableFuture<Runnable> first = q.enter("n");
        CompletableFuture<Runnable> second = q.enter("n");
        CompletableFuture<Runnable> third = q.enter("n");
        CompletableFuture<Runnable> other = q.enter("other");
        assertThat(first).isDone();
        assertThat(other).isDone();
        assertThat(second).isNotDone();
        second.cancel(false);
        Runnable permit = first.join();
        permit.run();
        permit.run();
        assertThat(third).isDone();
        third.join().run();
        assertThat(q.isBusy("n")).isFalse();
        other.join().run();
        assertThat(q.isBusy("other")).isFalse();
    }
}
