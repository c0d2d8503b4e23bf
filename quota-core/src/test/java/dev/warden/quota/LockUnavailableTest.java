package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The lock backend dies while charges run (its own Redis, killed): under {@code lock-unavailable=fail}
 * a charge fails with LOCK_FAILED and changes nothing; under {@code proceed} it runs unlocked and
 * unfenced, guarded by the script's balance check, and the listener is told. When the backend comes
 * back, charges are fenced again.
 */
class LockUnavailableTest {

    @RegisterExtension
    static final RedisServerExtension quotaRedis = new RedisServerExtension();
    @RegisterExtension
    static final RedisServerExtension lockRedis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);

    static Map<String, Object> settings(String policy) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", quotaRedis.server().uri());
        s.put("warden.quota.lock", "redis");
        s.put("warden.quota.lock-wait", "1s");
        s.put("warden.quota.lock-unavailable", policy);
        s.put("warden.lock.endpoints", lockRedis.server().uri());
        s.put("warden.lock.namespace", "charge-" + UUID.randomUUID());
        s.put("warden.lock.ttl", "2s");
        s.putAll(ConnectTimeouts.SETTINGS);
        return s;
    }

    static String lastToken(String account) {
        List<Journal.Entry> entries = Journal.read(quotaRedis.server(), LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account)).toList();
        return entries.get(entries.size() - 1).token();
    }

    record Told(String account, String requestId, QuotaException cause) {
    }

    static QuotaListener recordingInto(List<Told> told) {
        return new QuotaListener() {
            @Override
            public void chargedWithoutLock(String account, String requestId, QuotaException cause) {
                told.add(new Told(account, requestId, cause));
            }
        };
    }

    @Test
    @DisplayName("lock-unavailable=fail: with the lock backend killed, a charge fails with LOCK_FAILED and changes nothing")
    void failByDefault() {
        List<Told> told = new CopyOnWriteArrayList<>();
        try (QuotaService quota = QuotaService.create(settings("fail"), recordingInto(told))) {
            String account = "m-" + UUID.randomUUID();
            quota.open(account, 1_000);
            assertThat(quota.charge(account, "before-" + account, balance -> 10).isApplied()).isTrue();
            assertThat(lastToken(account)).isNotEqualTo("-");

            lockRedis.server().kill();
            try {
                QuotaException failed = catchThrowableOfType(QuotaException.class,
                        () -> quota.charge(account, "during-" + account, balance -> 10));
                assertThat(failed.reason()).isEqualTo(QuotaException.Reason.LOCK_FAILED);
                assertThat(quota.balance(account)).hasValue(990);
                assertThat(told).isEmpty();
            } finally {
                lockRedis.server().restart();
            }
            Await.until(java.time.Duration.ofSeconds(30), "charges are locked and fenced again once the backend is back",
                    () -> {
                        try {
                            return quota.charge(account, "after-" + account, balance -> 10).isApplied();
                        } catch (QuotaException e) {
                            return false; // the lock client is still reconnecting
                        }
                    });
            assertThat(lastToken(account)).isNotEqualTo("-");
            assertThat(quota.balance(account)).hasValue(980);
        }
    }

    @Test
    @DisplayName("lock-unavailable=proceed: with the lock backend killed, charges run unlocked and unfenced, the balance check still holds, and the listener is told")
    void proceedWithoutTheLock() {
        List<Told> told = new CopyOnWriteArrayList<>();
        try (QuotaService quota = QuotaService.create(settings("proceed"), recordingInto(told))) {
            String account = "m-" + UUID.randomUUID();
            quota.open(account, 25);
            assertThat(quota.charge(account, "before-" + account, balance -> 10).isApplied()).isTrue();

            lockRedis.server().kill();
            List<Outcome> during = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    during.add(quota.charge(account, "during-" + i + "-" + account, balance -> 10));
                }
            } finally {
                lockRedis.server().restart();
            }
            assertThat(during.get(0).isApplied()).isTrue();
            assertThat(lastToken(account)).as("unfenced").isEqualTo("-");
            assertThat(during.get(1)).as("the script's balance check is the guard").isEqualTo(new Outcome.Insufficient(5));
            assertThat(during.get(2)).isEqualTo(new Outcome.Insufficient(5));
            assertThat(told).hasSize(3).allSatisfy(t -> {
                assertThat(t.account()).isEqualTo(account);
                assertThat(t.cause().reason()).isEqualTo(QuotaException.Reason.LOCK_FAILED);
            });
            assertThat(told.get(0).requestId()).isEqualTo("during-0-" + account);
            assertThat(quota.balance(account)).hasValue(5);
        }
    }
}
