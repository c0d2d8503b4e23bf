package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Client lifecycle and bad input.
 */
abstract class LifecycleClauses {

    private final LockKit kit;

    LifecycleClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("closing a client releases what it holds and refuses new work")
    void closeReleases() {
        LockClient c = kit.client();
        List<String> held = List.of(kit.newName(), kit.newName(), kit.newName());
        List<Lease> leases = new ArrayList<>();
        for (String name : held) {
            leases.add(c.lock(name).acquire());
        }
        AtomicReference<LeaseLost> told = LockKit.watch(leases.get(0));
        assertThat(held).allMatch(kit::onServer);
        c.close();
        assertThat(held).noneMatch(kit::onServer);
        Await.until(kit.slack(), "the holder is told", () -> told.get() != null);
        assertThat(told.get().reason()).isEqualTo(LostReason.CLIENT_CLOSED);
        assertThat(leases).noneMatch(Lease::isValid);
        LockClient other = kit.client();
        for (String name : held) {
            assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }
        assertThatThrownBy(() -> c.lock(kit.newName())).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CLOSED);
        c.close();
    }

    @Test
    @DisplayName("closing a client stops its waiting acquisitions")
    void closeStopsWaiters() throws Exception {
        String name = kit.newName();
        LockClient waiter = kit.client();
        try (Lease held = kit.client().lock(name).acquire()) {
            CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync();
            waiter.close();
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CLOSED);
            assertThat(held.isValid()).isTrue();
        }
        // With leases kept, the holder's client may keep the released lock until the closed waiter's contender
        // reaches it (or for keptFor()); what is checked is that the closed waiter leaves nothing behind.
        assertThat(kit.freed(name)).as("let go of on the server").isTrue();
        Await.during(kit.renewInterval(), "nothing left on the server", () -> !kit.onServer(name));
    }

    @Test
    @DisplayName("invalid names are rejected with IllegalArgumentException")
    void invalidNames() {
        LockClient c = kit.client();
        for (String bad : new String[] {null, "", "a\u0000b", "tab\there", "x".repeat(257), "\uD800", "é".repeat(129)}) {
            assertThatThrownBy(() -> c.lock(bad)).as("name %s", bad).isInstanceOf(IllegalArgumentException.class);
        }
        try (Lease odd = c.lock("订单:{42}/a b*?[]").acquire()) {
            assertThat(odd.isValid()).isTrue();
        }
        assertThat(c.lock("x".repeat(256)).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("invalid durations are rejected with IllegalArgumentException")
    void invalidDurations() {
        DistributedLock lock = kit.client().lock(kit.newName());
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.tryAcquire(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(-5))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> kit.client("ttl", "0s")).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThatThrownBy(() -> lock.withMaxHoldTime(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("40 fresh names in a row are each granted, released and gone from the backend")
    void freshNames() {
        LockClient c = kit.client();
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String name = kit.newName();
            Lease lease = c.lock(name).tryAcquire(kit.slack()).orElseThrow(
                    () -> new AssertionError("a fresh name was not granted"));
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            if (kit.keptFor().isZero()) {
                assertThat(kit.freed(name)).isTrue();
            } else {
                // A kept hold is let go keptFor() after its release: waited for once for all 40 names, not in turn.
                kept.add(name);
            }
        }
        for (String name : kept) {
            assertThat(kit.freed(name)).as("%s let go of once kept", name).isTrue();
        }
    }
}
