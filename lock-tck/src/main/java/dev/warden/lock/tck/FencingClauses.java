package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing tokens strictly increase with each grant of a name, across clients.
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
}
