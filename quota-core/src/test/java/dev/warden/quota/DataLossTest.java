package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** "Redis lost its data" is its own error, never "account not found". */
class DataLossTest {

    /** No RDB, no AOF: a killed server comes back empty. */
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    @DisplayName("after a restart that lost everything, deduct, top-up and balance report DATA_LOST and write nothing")
    void lostData() {
        try (QuotaService quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint",
                redis.server().uri())))) {
            String account = "m-" + UUID.randomUUID();
            quota.open(account, 1_000);
            quota.deduct(account, 10, UUID.randomUUID().toString());

            redis.server().kill();
            redis.server().restart();

            QuotaException e = catchThrowableOfType(QuotaException.class, () -> Await.retryWhileUnavailable(
                    Duration.ofSeconds(30), () -> quota.deduct(account, 10, UUID.randomUUID().toString())));
            assertThat(e.reason()).isEqualTo(QuotaException.Reason.DATA_LOST);
            assertThat(catchThrowableOfType(QuotaException.class, () -> quota.topUp(account, 10, "r")).reason())
                    .isEqualTo(QuotaException.Reason.DATA_LOST);
            assertThat(catchThrowableOfType(QuotaException.class, () -> quota.refund(account, 10, "r")).reason())
                    .isEqualTo(QuotaException.Reason.DATA_LOST);
            assertThat(catchThrowableOfType(QuotaException.class, () -> quota.balance(account)).reason())
                    .isEqualTo(QuotaException.Reason.DATA_LOST);
            assertThat(redis.server().command("DBSIZE")).isEqualTo(0L);
        }
    }

    @Test
    @DisplayName("a service configured with another partition count is told so, not 'not found'")
    void partitionCountChanged() {
        Set<Integer> covered = new HashSet<>();
        KeyLayout sixteen = new KeyLayout(16);
        try (QuotaService quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint",
                redis.server().uri())))) {
            while (covered.size() < 16) {
                String account = "m-" + UUID.randomUUID();
                if (covered.add(sixteen.partition(account))) {
                    quota.open(account, 1);
                }
            }
        }
        try (QuotaService quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.partitions", "8")))) {
            QuotaException e = catchThrowableOfType(QuotaException.class,
                    () -> quota.deduct("m-" + UUID.randomUUID(), 1, "r"));
            assertThat(e.reason()).isEqualTo(QuotaException.Reason.PARTITIONS_CHANGED);
            e = catchThrowableOfType(QuotaException.class, () -> quota.open("m-" + UUID.randomUUID(), 1));
            assertThat(e.reason()).isEqualTo(QuotaException.Reason.PARTITIONS_CHANGED);
        }
    }
}
