package dev.warden.lock.internal.migration;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockDriver;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MigratingDriverTest {

    /** A driver of a third-party backend that cannot raise token floors; it only counts closes. */
    private static final class NoFloors implements LockDriver {
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public LockAttempt attempt(String name, String owner) {
            throw new AssertionError("never used");
        }

        @Override
        public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
            throw new AssertionError("never used");
        }

        @Override
        public CompletionStage<Boolean> release(Grant grant) {
            throw new AssertionError("never used");
        }

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }

    @Test
    @DisplayName("a backend whose driver cannot raise token floors is refused with CONFIGURATION, and both drivers are closed")
    void refusesADriverWithoutFloors() {
        NoFloors left = new NoFloors();
        NoFloors target = new NoFloors();
        assertThatThrownBy(() -> MigratingDriver.of(left, "jdbc", target, "other", Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("the jdbc backend cannot take part in a migration");
        assertThat(left.closed).hasValue(1);
        assertThat(target.closed).hasValue(1);
    }
}
