package dev.warden.lock.memory.internal;

import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The store alone: what the server side of the in-memory backend promises. */
class MemoryStoreTest {

    private static final long TTL = Duration.ofMillis(100).toNanos();

    private final MemoryStore store = MemoryStore.named("store-test-" + System.nanoTime());

    @Test
    @DisplayName("a holder that stops renewing is gone after its TTL; its token renews and releases nothing any more")
    void ttlExpires() {
        MemoryStore.Ticket first = store.enqueue("k", "a", () -> { });
        MemoryStore.Ticket second = store.enqueue("k", "b", () -> { });
        MemoryGrant a = store.poll("k", first, TTL).grant();
        MemoryStore.Polled waiting = store.poll("k", second, TTL);
        assertThat(waiting.grant()).isNull();
        assertThat(waiting.holderLeftNanos()).isPositive().isLessThanOrEqualTo(TTL);
        Await.until(Duration.ofSeconds(5), "the holder's TTL passes", () -> store.poll("k", second, TTL).grant() != null);
        assertThat(store.renew("k", a.fencingToken(), TTL)).isFalse();
        assertThat(store.release("k", a.fencingToken())).isFalse();
        assertThat(store.hasState("k")).isTrue();
    }

    @Test
    @DisplayName("the queue is first come, first served, tokens strictly increase, and a release wakes those waiting")
    void queueAndWakeUps() {
        AtomicInteger woken = new AtomicInteger();
        MemoryStore.Ticket first = store.enqueue("k", "a", () -> { });
        MemoryStore.Ticket second = store.enqueue("k", "b", woken::incrementAndGet);
        MemoryStore.Ticket third = store.enqueue("k", "c", woken::incrementAndGet);
        MemoryGrant a = store.poll("k", first, TTL).grant();
        assertThat(woken).as("those still queued learn of the new holder").hasValue(2);
        assertThat(store.poll("k", third, TTL).grant()).isNull();
        assertThat(store.release("k", a.fencingToken())).isTrue();
        assertThat(woken).hasValue(4);
        assertThat(store.poll("k", third, TTL).grant()).as("not first in the queue").isNull();
        MemoryGrant b = store.poll("k", second, TTL).grant();
        assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
        store.release("k", b.fencingToken());
        store.leave("k", third);
        assertThat(store.hasState("k")).isFalse();
    }

    @Test
    @DisplayName("a holder raises the token floor: every later grant of any lock exceeds it; a stale token raises nothing")
    void floorRises() {
        MemoryStore.Ticket first = store.enqueue("k", "a", () -> { });
        MemoryGrant a = store.poll("k", first, TTL).grant();
        assertThat(store.raiseFloor("k", a.fencingToken(), 1_000_000)).isTrue();
        assertThat(store.raiseFloor("k", a.fencingToken(), 10)).as("a lower floor lowers nothing").isTrue();
        assertThat(store.release("k", a.fencingToken())).isTrue();
        assertThat(store.raiseFloor("k", a.fencingToken(), 5_000_000)).as("no longer the holder").isFalse();
        MemoryStore.Ticket other = store.enqueue("idle", "b", () -> { });
        long next = store.poll("idle", other, TTL).grant().fencingToken();
        assertThat(next).as("a lock never taken before, after the floor rose").isEqualTo(1_000_001);
    }
}
