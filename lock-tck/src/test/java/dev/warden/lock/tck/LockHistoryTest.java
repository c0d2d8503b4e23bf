package dev.warden.lock.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class LockHistoryTest {

    @Test
    @DisplayName("a clean run has no violations")
    void clean() {
        LockHistory h = new LockHistory();
        h.granted("n", 1, "a");
        h.releasing("n", 1, "a");
        h.granted("n", 2, "b");
        h.releasing("n", 2, "b");
        assertThat(h.violations()).isEmpty();
    }

    @Test
    @DisplayName("a grant while another holder still relies on the lock is an overlap")
    void overlap() {
        LockHistory h = new LockHistory();
        h.granted("n", 1, "a");
        h.granted("n", 2, "b");
        h.releasing("n", 1, "a");
        h.releasing("n", 2, "b");
        assertThat(h.violations()).anyMatch(v -> v.startsWith("overlap"));
    }

    @Test
    @DisplayName("a lower token granted later is a token regression")
    void tokenOrder() {
        LockHistory h = new LockHistory();
        h.granted("n", 5, "a");
        h.releasing("n", 5, "a");
        h.granted("n", 3, "b");
        h.releasing("n", 3, "b");
        assertThat(h.violations()).anyMatch(v -> v.startsWith("token order"));
    }

    @Test
    @DisplayName("a loss whose last valid moment precedes its grant record closes the interval")
    void lossBeforeGrantRecord() {
        LockHistory h = new LockHistory();
        Instant beforeGrant = Instant.now().minusMillis(50);
        h.granted("n", 1, "a");
        h.lost("n", 1, "a", beforeGrant);
        h.granted("n", 2, "b");
        h.releasing("n", 2, "b");
        assertThat(h.violations()).isEmpty();
    }

    @Test
    @DisplayName("a renewal sent after release began is reported")
    void renewalAfterRelease() {
        LockHistory h = new LockHistory();
        var observer = h.observer("a");
        observer.granted("n", 1, java.time.Duration.ZERO);
        observer.releasing("n", 1);
        observer.renewing("n", 1);
        assertThat(h.violations()).anyMatch(v -> v.startsWith("renewal"));
    }

    @Test
    @DisplayName("the token order alone: an overlap a failover allows is not reported, a regression is, losses are timed")
    void tokenOrderOnly() {
        LockHistory h = new LockHistory();
        h.granted("n", 1, "a");
        h.granted("n", 2, "b");
        // Relied on well after the second grant: Instant and nanoTime differ by microseconds.
        h.lost("n", 1, "a", Instant.now().plusSeconds(1));
        h.releasing("n", 2, "b");
        assertThat(h.violations()).anyMatch(v -> v.startsWith("overlap"));
        assertThat(h.tokenOrderViolations()).isEmpty();
        assertThat(h.lossesDetected()).containsOnlyKeys(LockHistory.leaseKey("n", 1));
        h.granted("n", 1, "c");
        assertThat(h.tokenOrderViolations()).anyMatch(v -> v.contains("granted twice") || v.startsWith("token order"));
    }
}
