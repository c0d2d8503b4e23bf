package dev.warden.lock.internal;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class FencingEpochTest {

    @Test
    @DisplayName("a lease shows its grant's token under the client's epoch: epoch << 53 | backend token")
    void composed() {
        try (VirtualClient v = new VirtualClient(Duration.ofSeconds(30), Optional.empty(), 3)) {
            try (Lease lease = v.client.lock("a").acquire()) {
                assertThat(lease.fencingToken()).isEqualTo((3L << 53) | 1);
                assertThat(FencingEpoch.epochOf(lease.fencingToken())).isEqualTo(3);
                assertThat(FencingEpoch.backendTokenOf(lease.fencingToken())).isEqualTo(1);
            }
        }
        try (VirtualClient v = new VirtualClient()) {
            try (Lease lease = v.client.lock("a").acquire()) {
                assertThat(lease.fencingToken()).as("epoch 0: the backend's own token").isEqualTo(1);
            }
        }
    }

    @Test
    @DisplayName("a grant whose token does not fit in 53 bits fails the acquisition (PROTOCOL) and is released, never shown")
    void tooWide() {
        try (VirtualClient v = new VirtualClient()) {
            ScriptedDriver.Grant1 wide = new ScriptedDriver.Grant1(1L << 53);
            v.driver.thenPoll(() -> CompletableFuture.completedFuture(Optional.of(wide)));
            LockException e = catchThrowableOfType(LockException.class, () -> v.client.lock("a").acquire());
            assertThat(e.reason()).isEqualTo(LockException.Reason.PROTOCOL);
            assertThat(e.getMessage()).contains("9007199254740992", "53 bits");
            assertThat(v.driver.released()).containsExactly(wide);
            try (Lease lease = v.client.lock("a").acquire()) {
                assertThat(lease.fencingToken()).as("the next grant fits").isEqualTo(1);
            }
        }
    }

    @Test
    @DisplayName("the layout: the largest epoch and backend token, and nothing outside them")
    void layout() {
        assertThat(FencingEpoch.compose(FencingEpoch.MAX_EPOCH, FencingEpoch.MAX_BACKEND_TOKEN)).isEqualTo(Long.MAX_VALUE);
        assertThat(FencingEpoch.compose(1, 0)).isGreaterThan(FencingEpoch.compose(0, FencingEpoch.MAX_BACKEND_TOKEN));
        assertThatThrownBy(() -> FencingEpoch.compose(1024, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencingEpoch.compose(-1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FencingEpoch.compose(0, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("warden.lock.fencing-epoch outside 0..1023 is a CONFIGURATION error before anything connects")
    void configured() {
        LockException e = catchThrowableOfType(LockException.class, () -> LockClient.create(Map.of(
                "warden.lock.backend", "nowhere", "warden.lock.endpoints", "nowhere://x", "warden.lock.fencing-epoch", "1024")));
        assertThat(e.getMessage()).contains("warden.lock.fencing-epoch must be 0..1023, was 1024");
    }
}
