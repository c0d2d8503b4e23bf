package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An operator's view: the holder of a lock read from the server, and a forced release that ends a hold
 * by its token, tells the holder {@code FORCED} by its next renewal, lets the next holder in above it,
 * and is audited.
 */
abstract class ForcedReleaseClauses {

    private final LockKit kit;

    ForcedReleaseClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("an operator sees the holder; a forced release by its token tells the holder FORCED by its next renewal, and the evicted holder's fenced write after the next holder's is refused")
    void forcedRelease() {
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(held);
        List<String> audited = new CopyOnWriteArrayList<>();
        LockClient operator = kit.observedClient(new LockObserver() {
            @Override
            public void forceReleased(String lock, long fencingToken, String who, String why) {
                audited.add(lock + " " + fencingToken + " " + who + " " + why);
            }
        });
        LockAdmin admin = operator.admin();
        LockAdmin.Holding seen = admin.holder(name).orElseThrow(() -> new AssertionError("the operator sees no holder"));
        if (kit.observedTermExact()) {
            assertThat(seen.token()).as("the token the operator sees").isEqualTo(held.fencingToken());
        }
        if (!kit.canForceRelease()) {
            assertThatThrownBy(() -> admin.forceRelease(name, seen.token(), "ops", "a hung holder"))
                    .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION));
            return;
        }
        assertThat(admin.forceRelease(name, seen.token() + 1, "ops", "a token nobody holds")).isFalse();
        assertThat(held.isValid()).as("the hold a wrong token did not end").isTrue();

        assertThat(admin.forceRelease(name, seen.token(), "ops@example", "a hung holder")).isTrue();
        Await.until(kit.renewInterval().plus(kit.slack()), "the evicted holder is told", () -> lost.get() != null);
        assertThat(lost.get().reason()).isEqualTo(LostReason.FORCED);
        assertThat(held.isValid()).isFalse();
        Lease next = kit.client().lock(name).tryAcquire(kit.slack()).orElseThrow(
                () -> new AssertionError("the lock was not free after the forced release"));
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        FencedRegister register = new FencedRegister();
        assertThat(register.write(next.fencingToken(), 2)).as("the next holder's write").isTrue();
        assertThat(register.write(held.fencingToken(), 1)).as("the evicted holder's write after it").isFalse();

        assertThat(admin.forceRelease(name, seen.token(), "ops", "the old token again")).as("a stale token").isFalse();
        assertThat(next.isValid()).as("the next hold, which a stale token did not end").isTrue();
        assertThat(audited).containsExactly(name + " " + seen.token() + " ops@example a hung holder");
        next.release();
        assertThat(kit.freed(name)).as("let go of on the server").isTrue();
        assertThat(admin.holder(name)).as("the holder of a free lock").isEmpty();
    }

    @Test
    @DisplayName("lists every held lock of the namespace with its holder and token: not a free lock, not a waiter, not another namespace's")
    void listsHolders() throws Exception {
        String a = kit.newName();
        String b = kit.newName();
        String free = kit.newName();
        Lease heldA = kit.client().lock(a).acquire();
        Lease heldB = kit.client().lock(b).acquire();
        kit.client().lock(free).acquire().release();
        assertThat(kit.freed(free)).as("the released lock let go of on the server").isTrue();
        java.util.concurrent.CompletableFuture<Lease> waiter = kit.client().lock(b).acquireAsync();
        Lease elsewhere = kit.client("namespace", kit.namespace() + "-other").lock(a).acquire();
        LockAdmin admin = kit.client().admin();
        if (!kit.canListHolders()) {
            assertThatThrownBy(admin::holders).as("a listing by a user without the right to list")
                    .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED));
            waiter.cancel(true);
            return;
        }

        List<LockAdmin.Holding> listed = admin.holders();
        assertThat(listed).extracting(LockAdmin.Holding::name).as("the held locks, by name").containsExactlyElementsOf(
                java.util.stream.Stream.of(a, b).sorted().toList());
        assertThat(listed).allSatisfy(h -> assertThat(h.holderId()).isNotBlank());
        if (kit.observedTermExact()) {
            assertThat(listed).extracting(LockAdmin.Holding::token).as("their tokens").containsExactlyElementsOf(
                    a.compareTo(b) < 0 ? List.of(heldA.fencingToken(), heldB.fencingToken())
                            : List.of(heldB.fencingToken(), heldA.fencingToken()));
        }
        assertThat(listed).extracting(LockAdmin.Holding::holderId).as("the same holders as one by one")
                .containsExactlyElementsOf(listed.stream().map(h -> admin.holder(h.name()).orElseThrow().holderId()).toList());
        waiter.cancel(true);
        heldA.release();
        heldB.release();
        elsewhere.release();
        Await.until(kit.slack(), "nothing listed once every lock is free", () -> admin.holders().isEmpty());
    }

    @Test
    @DisplayName("a forced release without an operator or a reason is refused with IllegalArgumentException, and ends nothing")
    void forcedReleaseNeedsAnAudit() {
        String name = kit.newName();
        Lease held = kit.client().lock(name).acquire();
        LockAdmin admin = kit.client().admin();
        long token = held.fencingToken();
        assertThatThrownBy(() -> admin.forceRelease(name, token, " ", "why")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> admin.forceRelease(name, token, "ops", "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> admin.holder("")).isInstanceOf(IllegalArgumentException.class);
        assertThat(held.isValid()).isTrue();
        held.release();
    }
}
