package dev.warden.reactor;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.quota.Deduction;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.Outcome;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ReactiveQuota} over a real quota engine on a redis-server launched for this class. */
class ReactiveQuotaTest {

    static final Duration DEADLINE = Duration.ofSeconds(10);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static QuotaService service;
    static LockClient locks;
    static ReactiveQuota quota;

    @BeforeAll
    static void connect() {
        // Generous connect timeouts: the tests share two cores with other builds.
        service = QuotaService.create(Map.of("warden.quota.endpoint", redis.server().uri(), "warden.quota.lock", "redis",
                "warden.quota.connect-timeout", "30s", "warden.lock.connect-timeout", "30s"));
        locks = LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.connect-timeout", "30s"));
        quota = ReactiveQuota.of(service);
    }

    @AfterAll
    static void close() {
        locks.close();
        service.close();
    }

    static String fresh(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static String opened(long balance) {
        String account = fresh("merchant");
        StepVerifier.create(quota.open(account, balance)).expectNextMatches(o -> o instanceof Outcome.Applied)
                .expectComplete().verify(DEADLINE);
        return account;
    }

    /** An account never opened, in the partition of {@code account} (one without accounts has no marker yet). */
    static String unopenedInPartitionOf(String account) {
        KeyLayout layout = new KeyLayout(16);
        while (true) {
            String candidate = fresh("nobody");
            if (layout.partition(candidate) == layout.partition(account)) {
                return candidate;
            }
        }
    }

    @Test
    @DisplayName("cold: nothing is sent until a subscription, and each subscription sends again (idempotent)")
    void cold() {
        String account = opened(100);
        Mono<Outcome> topUp = quota.topUp(account, 50, fresh("top-up"));
        assertThat(service.balance(account)).as("assembled, not sent").hasValue(100);

        Outcome first = topUp.block(DEADLINE);
        assertThat(first).isInstanceOfSatisfying(Outcome.Applied.class, o -> assertThat(o.balance()).isEqualTo(150));
        StepVerifier.create(topUp).expectNext(new Outcome.Duplicate((Outcome.Applied) first)).expectComplete().verify(DEADLINE);
        assertThat(service.balance(account)).hasValue(150);
    }

    @Test
    @DisplayName("open, top up, deduct, refund and balance; a blocking call runs on boundedElastic")
    void changesAndBalance() {
        String account = opened(1_000);

        StepVerifier.create(quota.topUp(account, 500, fresh("top-up")))
                .assertNext(o -> assertThat(((Outcome.Applied) o).balance()).isEqualTo(1_500)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.deduct(account, 300, fresh("order")))
                .assertNext(o -> assertThat(((Outcome.Applied) o).balance()).isEqualTo(1_200)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.refund(account, 100, fresh("refund")))
                .assertNext(o -> assertThat(((Outcome.Applied) o).balance()).isEqualTo(1_300)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.deduct(account, 10_000, fresh("order")))
                .expectNext(new Outcome.Insufficient(1_300)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.balance(account).map(b -> b + "@" + Thread.currentThread().getName()))
                .assertNext(s -> assertThat(s).startsWith("1300@boundedElastic")).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.open(account, 5)).expectNext(new Outcome.AccountExists(1_300)).expectComplete().verify(DEADLINE);
    }

    @Test
    @DisplayName("a repeated request id answers Duplicate: a retry after a cancelled call learns what happened")
    void retryWithTheSameRequestId() {
        String account = opened(100);
        String request = fresh("order");
        Outcome first = quota.deduct(account, 40, request).block(DEADLINE);
        assertThat(first).isInstanceOf(Outcome.Applied.class);
        StepVerifier.create(quota.deduct(account, 40, request))
                .expectNext(new Outcome.Duplicate((Outcome.Applied) first)).expectComplete().verify(DEADLINE);
    }

    @Test
    @DisplayName("an unknown account: balance and balances complete empty")
    void unknownAccount() {
        String account = unopenedInPartitionOf(opened(1));        // a partition with a marker: no data lost there
        StepVerifier.create(quota.balance(account)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.balances(account)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.deduct(account, 1, fresh("order")))
                .expectNext(new Outcome.AccountNotFound(account)).expectComplete().verify(DEADLINE);
    }

    @Test
    @DisplayName("an invalid id is an error signal at subscription, not an exception at assembly")
    void invalidIdIsAnError() {
        Mono<Outcome> deduct = quota.deduct("", 1, fresh("order"));
        Mono<Outcome> topUp = quota.topUp("bad\nid", 1, fresh("order"));
        StepVerifier.create(deduct).expectError(InvalidIdException.class).verify(DEADLINE);
        StepVerifier.create(topUp).expectError(InvalidIdException.class).verify(DEADLINE);
    }

    @Test
    @DisplayName("a fenced deduction in a reactive critical section on the account's lock: the lease's token is the mark")
    void fencedDeductionUnderReactiveLock() {
        String account = opened(1_000);
        ReactiveLock lock = ReactiveLock.of(locks.lock(quota.lockName(account)));
        AtomicReference<Long> token = new AtomicReference<>();

        StepVerifier.create(lock.withLockMono(lease -> {
                    token.set(lease.fencingToken());
                    return quota.deduct(account, 100, fresh("order"), lease);
                }))
                .assertNext(o -> assertThat(((Outcome.Applied) o).balance()).isEqualTo(900))
                .expectComplete().verify(DEADLINE);
        assertThat(redis.server().command("HGET", new KeyLayout(16).accountKey(account), "fence"))
                .as("the account's fence mark").isEqualTo(String.valueOf(token.get()));

        Lease released = lock.acquire().block(DEADLINE);
        assertThat(released).isNotNull();
        released.release();
        StepVerifier.create(quota.deduct(account, 1, fresh("order"), released))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(QuotaException.class,
                        q -> assertThat(q.reason()).isEqualTo(QuotaException.Reason.LEASE_INVALID)))
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("charge under the engine's lock: pricing runs on the blocking scheduler given")
    void chargeOnTheGivenScheduler() {
        Scheduler calls = Schedulers.newBoundedElastic(2, 100, "quota-calls");
        try {
            ReactiveQuota onCalls = ReactiveQuota.of(service, calls);
            String account = opened(100);
            AtomicReference<String> pricedOn = new AtomicReference<>();

            StepVerifier.create(onCalls.charge(account, fresh("order"), balance -> {
                        pricedOn.set(Thread.currentThread().getName());
                        return balance / 4;
                    }))
                    .assertNext(o -> assertThat(((Outcome.Applied) o).balance()).isEqualTo(75))
                    .expectComplete().verify(DEADLINE);
            assertThat(pricedOn.get()).startsWith("quota-calls");
            assertThat(onCalls.service()).isSameAs(service);
        } finally {
            calls.dispose();
        }
    }

    @Test
    @DisplayName("holds: hold, capture, release, chargeHold, expireHolds")
    void holds() {
        String account = opened(1_000);
        String hold = fresh("hold");
        StepVerifier.create(quota.hold(account, 300, hold, Duration.ofMinutes(5)))
                .assertNext(o -> assertThat(((HoldOutcome.Held) o).held()).isEqualTo(300)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.capture(account, hold, 200))
                .assertNext(o -> assertThat(((HoldOutcome.Captured) o).available()).isEqualTo(800)).expectComplete().verify(DEADLINE);

        String voided = fresh("hold");
        quota.hold(account, 100, voided, Duration.ofMinutes(5)).block(DEADLINE);
        StepVerifier.create(quota.release(account, voided))
                .assertNext(o -> assertThat(((HoldOutcome.Released) o).available()).isEqualTo(800)).expectComplete().verify(DEADLINE);

        String charged = fresh("hold");
        quota.hold(account, 100, charged, Duration.ofMinutes(5)).block(DEADLINE);
        StepVerifier.create(quota.chargeHold(account, charged, held -> held / 2))
                .assertNext(o -> assertThat(((HoldOutcome.Captured) o).captured()).isEqualTo(50)).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.expireHolds()).assertNext(n -> assertThat(n).isNotNegative()).expectComplete().verify(DEADLINE);
        assertThat(service.balance(account)).hasValue(750);
    }

    @Test
    @DisplayName("named balances, postings, batches, split and merge")
    void balancesBatchesAndSplits() {
        String account = opened(1_000);
        StepVerifier.create(quota.openBalance(account, "points")).expectNextMatches(o -> o instanceof PostingOutcome.Opened)
                .expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.post(account, fresh("post"), Map.of("points", 25L)))
                .expectNextMatches(o -> o instanceof PostingOutcome.Posted).expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.balances(account)).assertNext(b -> assertThat(b).containsEntry("points", 25L))
                .expectComplete().verify(DEADLINE);

        StepVerifier.create(quota.deductAll(List.of(new Deduction(account, 100, fresh("order")),
                        new Deduction(account, 5_000, fresh("order")))))
                .assertNext(outcomes -> {
                    assertThat(outcomes.get(0)).isInstanceOf(Outcome.Applied.class);
                    assertThat(outcomes.get(1)).isInstanceOf(Outcome.Insufficient.class);
                })
                .expectComplete().verify(DEADLINE);

        StepVerifier.create(quota.split(account, 4)).expectNextMatches(o -> o instanceof SplitOutcome.Split)
                .expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.merge(account)).expectNextMatches(o -> o instanceof SplitOutcome.Merged)
                .expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.balance(account)).expectNext(900L).expectComplete().verify(DEADLINE);

        String splitAtOpen = fresh("merchant");
        StepVerifier.create(quota.open(splitAtOpen, 400, 2)).expectNextMatches(o -> o instanceof Outcome.Applied)
                .expectComplete().verify(DEADLINE);
        StepVerifier.create(quota.balance(splitAtOpen)).expectNext(400L).expectComplete().verify(DEADLINE);
    }
}
