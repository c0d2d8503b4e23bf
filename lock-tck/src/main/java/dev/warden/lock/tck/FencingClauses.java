package dev.warden.lock.tck;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Fencing tokens strictly increase with each grant of a name, across clients; a backend's own token fits
 * below the fencing epoch (53 bits), and a client of a higher epoch gets tokens above every lower epoch's
 * ({@link FencingEpoch}); a client whose epoch is below one its namespace already used does not open.
 */
abstract class FencingClauses {

    private final LockKit kit;

    FencingClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("strictly increase across successive grants on different clients")
    void increaseAcrossClients() {
        LockClient a = kit.client();
        LockClient b = kit.client();
        String name = kit.newName();
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 10; i++) {
            try (Lease lease = (i % 2 == 0 ? a : b).lock(name).acquire()) {
                assertThat(lease.fencingToken()).isGreaterThan(last);
                last = lease.fencingToken();
            }
        }
    }

    @Test
    @DisplayName("fit in 53 bits at epoch 0; a client of the next epoch gets the same backend's next token in the epoch's bits, above every earlier token")
    void epochOrdersAboveEveryEarlierToken() {
        LockClient before = kit.client();
        LockClient after = kit.client("fencing-epoch", "1");
        String name = kit.newName();
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 3; i++) {
            try (Lease lease = before.lock(name).acquire()) {
                assertThat(lease.fencingToken()).as("a backend's own token, at epoch 0").isBetween(0L, FencingEpoch.MAX_BACKEND_TOKEN)
                        .isGreaterThan(last);
                last = lease.fencingToken();
            }
        }
        try (Lease lease = after.lock(name).acquire()) {
            assertThat(FencingEpoch.epochOf(lease.fencingToken())).isEqualTo(1);
            assertThat(FencingEpoch.backendTokenOf(lease.fencingToken())).as("the backend's own sequence goes on")
                    .isGreaterThan(last);
            assertThat(lease.fencingToken()).isGreaterThan(last);
            last = lease.fencingToken();
        }
        try (Lease lease = before.lock(name).acquire()) {
            assertThat(lease.fencingToken()).as("a client left at the old epoch: below, so a guarded resource refuses it")
                    .isLessThan(last);
        }
    }

    @Test
    @DisplayName("a client whose epoch is below one its namespace already used is refused as it opens, before anything is acquired")
    void lowerEpochRefusedAtStart() {
        String name = kit.newName();
        try (Lease lease = kit.client("fencing-epoch", "2").lock(name).acquire()) {
            assertThat(FencingEpoch.epochOf(lease.fencingToken())).isEqualTo(2);
        }
        assertThatThrownBy(() -> kit.client("fencing-epoch", "1"))
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("warden.lock.fencing-epoch 1 is below 2");
        assertThat(kit.freed(name)).as("nothing acquired").isTrue();
        try (Lease same = kit.client("fencing-epoch", "2").lock(name).acquire();
             LockClient next = kit.client("fencing-epoch", "3")) {
            assertThat(FencingEpoch.epochOf(same.fencingToken())).as("the same epoch again").isEqualTo(2);
        }
        assertThatThrownBy(() -> kit.client("fencing-epoch", "2")).as("once a client of epoch 3 opened")
                .isInstanceOf(LockException.class).hasMessageContaining("is below 3");
    }
}
