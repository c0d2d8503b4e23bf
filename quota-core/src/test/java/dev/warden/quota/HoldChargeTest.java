package dev.warden.quota;

import dev.warden.quota.internal.QuotaFactory;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.VirtualClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code chargeHold}: a charge priced on what a hold holds, under the account's Redis lock, on a real
 * Redis and the engine's virtual clock.
 */
class HoldChargeTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static final VirtualClock clock = new VirtualClock(Instant.parse("2026-01-01T00:00:00Z"));
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaFactory.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.lock", "redis", "warden.quota.idempotency-retention", "10m")), new QuotaListener() {
                }, clock);
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    static String opened(long balance) {
        String account = "merchant-" + UUID.randomUUID();
        assertThat(quota.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    static String held(String account) {
        return String.valueOf(redis.server().command("HGET", LAYOUT.accountKey(account), "held"));
    }

    @Test
    @DisplayName("pricing is given the held amount on the caller's thread; its price is captured and the rest returns to available")
    void pricedOnTheHold() {
        String account = opened(1_000);
        quota.hold(account, 300, "h1", Duration.ofMinutes(5));
        List<String> seen = new ArrayList<>();
        String caller = Thread.currentThread().getName();
        HoldOutcome outcome = quota.chargeHold(account, "h1", heldAmount -> {
            seen.add(heldAmount + "@" + Thread.currentThread().getName());
            return heldAmount - 120;
        });
        assertThat(seen).containsExactly("300@" + caller);
        assertThat(outcome).isInstanceOfSatisfying(HoldOutcome.Captured.class, c -> {
            assertThat(c.captured()).isEqualTo(180);
            assertThat(c.returned()).isEqualTo(120);
            assertThat(c.available()).isEqualTo(820);
        });
        assertThat(quota.balance(account)).hasValue(820);
        assertThat(held(account)).isEqualTo("0");
    }

    @Test
    @DisplayName("a retry answers DUPLICATE with the first capture and never prices again")
    void retryIsDuplicate() {
        String account = opened(1_000);
        quota.hold(account, 300, "h1", Duration.ofMinutes(5));
        AtomicInteger priced = new AtomicInteger();
        HoldOutcome first = quota.chargeHold(account, "h1", h -> {
            priced.incrementAndGet();
            return 100;
        });
        HoldOutcome again = quota.chargeHold(account, "h1", h -> {
            priced.incrementAndGet();
            return 250;
        });
        assertThat(first).isInstanceOf(HoldOutcome.Captured.class);
        assertThat(again).isEqualTo(new HoldOutcome.Duplicate(first));
        assertThat(priced).hasValue(1);
        assertThat(quota.balance(account)).hasValue(900);
    }

    @Test
    @DisplayName("a price above the hold is EXCEEDS_HOLD and captures nothing; the hold stays and a later charge captures it")
    void priceAboveTheHold() {
        String account = opened(1_000);
        quota.hold(account, 300, "h1", Duration.ofMinutes(5));
        assertThat(quota.chargeHold(account, "h1", h -> h + 1)).isEqualTo(new HoldOutcome.ExceedsHold(300));
        assertThat(held(account)).isEqualTo("300");
        assertThat(quota.balance(account)).hasValue(700);
        assertThat(quota.chargeHold(account, "h1", h -> h)).isInstanceOf(HoldOutcome.Captured.class);
        assertThat(quota.balance(account)).hasValue(700);
        assertThat(held(account)).isEqualTo("0");
    }

    @Test
    @DisplayName("no such hold is UNKNOWN_HOLD; a voided hold ALREADY_RELEASED; an expired one EXPIRED: none priced")
    void notHeld() {
        String account = opened(1_000);
        AtomicInteger priced = new AtomicInteger();
        Pricing counting = h -> {
            priced.incrementAndGet();
            return 1;
        };
        assertThat(quota.chargeHold(account, "nope", counting)).isEqualTo(new HoldOutcome.UnknownHold("nope"));
        quota.hold(account, 50, "voided", Duration.ofMinutes(5));
        quota.release(account, "voided");
        assertThat(quota.chargeHold(account, "voided", counting)).isEqualTo(new HoldOutcome.AlreadyReleased(50));
        quota.hold(account, 70, "lapsed", Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(31));
        assertThat(quota.chargeHold(account, "lapsed", counting)).isEqualTo(new HoldOutcome.Expired(70));
        assertThat(priced).hasValue(0);
        assertThat(quota.balance(account)).hasValue(1_000);
    }

    @Test
    @DisplayName("eight threads charging one hold: exactly one capture, the others its duplicate; the balance moves once")
    void concurrentChargesCaptureOnce() throws Exception {
        String account = opened(1_000);
        quota.hold(account, 400, "h1", Duration.ofMinutes(5));
        List<HoldOutcome> outcomes = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                calls.add(pool.submit(() -> outcomes.add(quota.chargeHold(account, "h1", h -> 150))));
            }
            for (Future<?> f : calls) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(outcomes).filteredOn(HoldOutcome.Captured.class::isInstance).hasSize(1);
        assertThat(outcomes).filteredOn(HoldOutcome.Duplicate.class::isInstance).hasSize(7);
        assertThat(quota.balance(account)).hasValue(850);
    }
}
