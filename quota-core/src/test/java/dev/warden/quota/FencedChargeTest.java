package dev.warden.quota;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.TcpProxy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The lock path with a real lock from lock-redis (found through lock-api's ServiceLoader). */
class FencedChargeTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);

    static Map<String, String> settings(String... more) {
        Map<String, String> s = ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri()));
        for (int i = 0; i + 1 < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    static String unopenedInPartitionOf(String account) {
        while (true) {
            String candidate = "m-" + UUID.randomUUID();
            if (LAYOUT.partition(candidate) == LAYOUT.partition(account)) {
                return candidate;
            }
        }
    }

    static List<Journal.Entry> entriesOf(String account) {
        return Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account)).toList();
    }

    @Test
    @DisplayName("charge with lock=redis: prices under the account's lock, deducts with the lease's token, releases")
    void chargeUnderTheLock() {
        String namespace = "charge-" + UUID.randomUUID();
        try (QuotaService quota = QuotaService.create(settings("warden.quota.lock", "redis",
                "warden.lock.namespace", namespace, "warden.lock.ttl", "10s"))) {
            String account = "m-" + UUID.randomUUID();
            String rid = "order-" + UUID.randomUUID();
            quota.open(account, 1_000);
            String lockKey = "{" + namespace + ":" + quota.lockName(account) + "}:lock";
            AtomicReference<Object> heldWhilePricing = new AtomicReference<>();

            Outcome outcome = quota.charge(account, rid + "-1", balance -> {
                heldWhilePricing.set(redis.server().command("EXISTS", lockKey));
                return balance / 10;
            });

            assertThat(outcome).isInstanceOf(Outcome.Applied.class);
            assertThat(((Outcome.Applied) outcome).balance()).isEqualTo(900);
            assertThat(heldWhilePricing.get()).isEqualTo(1L);
            assertThat(redis.server().command("EXISTS", lockKey)).as("released").isEqualTo(0L);
            Journal.Entry entry = entriesOf(account).get(1);
            assertThat(entry.token()).isNotEqualTo("-");
            assertThat(redis.server().command("HGET", LAYOUT.accountKey(account), "fence")).isEqualTo(entry.token());

            assertThat(quota.charge(account, rid + "-1", balance -> 100)).isInstanceOf(Outcome.Duplicate.class);
            assertThat(quota.charge(account, rid + "-2", balance -> balance + 1)).isEqualTo(new Outcome.Insufficient(900));
            String unknown = unopenedInPartitionOf(account);
            assertThat(quota.charge(unknown, rid + "-3", balance -> 1)).isEqualTo(new Outcome.AccountNotFound(unknown));
            assertThatThrownBy(() -> quota.charge(account, rid + "-4", balance -> {
                throw new IllegalStateException("pricing failed");
            })).hasMessage("pricing failed");
            assertThat(redis.server().command("EXISTS", lockKey)).as("released after a failed pricing").isEqualTo(0L);
            assertThat(quota.balance(account)).hasValue(900);
        }
    }

    @Test
    @DisplayName("charge with lock=memory (one JVM, for tests): fenced with the in-memory lock's token")
    void chargeUnderTheMemoryLock() {
        try (QuotaService quota = QuotaService.create(settings("warden.quota.lock", "memory"))) {
            String account = "m-" + UUID.randomUUID();
            quota.open(account, 100);
            assertThat(quota.charge(account, "order-" + UUID.randomUUID(), balance -> 40)).isInstanceOf(Outcome.Applied.class);
            Journal.Entry entry = entriesOf(account).get(1);
            assertThat(entry.token()).isNotEqualTo("-");
            assertThat(redis.server().command("HGET", LAYOUT.accountKey(account), "fence")).isEqualTo(entry.token());
        }
    }

    @Test
    @DisplayName("charge with lock=none: the same steps, unlocked and unfenced")
    void chargeWithoutLock() {
        try (QuotaService quota = QuotaService.create(settings("warden.quota.lock", "none"))) {
            String account = "m-" + UUID.randomUUID();
            String rid = "order-" + UUID.randomUUID();
            quota.open(account, 100);
            assertThat(quota.charge(account, rid + "-1", balance -> 40)).isInstanceOf(Outcome.Applied.class);
            assertThat(entriesOf(account).get(1).token()).isEqualTo("-");
            assertThat(redis.server().command("HGET", LAYOUT.accountKey(account), "fence")).isNull();
        }
    }

    @Test
    @DisplayName("a holder frozen past its TTL is refused after a newer holder has charged: locally, and by the script's fence")
    void frozenHolderIsRefused() {
        String namespace = "fence-" + UUID.randomUUID();
        String account = "m-" + UUID.randomUUID();
        URI direct = URI.create(redis.server().uri() + "?namespace=" + namespace + "&ttl=1s"
                + "&connect-timeout=" + ConnectTimeouts.CONNECT_TIMEOUT);
        try (TcpProxy proxy = TcpProxy.start(redis.server().host(), redis.server().port());
             LockClient holderLocks = LockClient.create(URI.create("redis://" + proxy.host() + ":" + proxy.port()
                     + "?namespace=" + namespace + "&ttl=1s&connect-timeout=" + ConnectTimeouts.CONNECT_TIMEOUT));
             LockClient otherLocks = LockClient.create(direct);
             QuotaService quota = QuotaService.create(settings())) {
            quota.open(account, 1_000);
            String lockName = quota.lockName(account);

            Lease old = holderLocks.lock(lockName).acquire();
            assertThat(quota.deduct(account, 10, "old-1", old)).isInstanceOf(Outcome.Applied.class);
            Lease checkedBeforeFreezing = new CheckedLease(old);

            proxy.blackhole(); // the holder is cut off: its renewals no longer arrive
            Await.until(Duration.ofSeconds(15), "the frozen holder's lease runs out", () -> !old.isValid());
            Optional<Lease> next = otherLocks.lock(lockName).tryAcquire(Duration.ofSeconds(15));
            assertThat(next).as("a newer holder gets the lock once the old one expired on the server").isPresent();
            Lease newer = next.get();
            assertThat(newer.fencingToken()).isGreaterThan(old.fencingToken());
            assertThat(quota.deduct(account, 100, "new-1", newer)).isInstanceOf(Outcome.Applied.class);
            List<Object> before = List.of(quota.balance(account), entriesOf(account).size(),
                    redis.server().command("EXISTS", LAYOUT.requestKey(account, "old-2")));

            // The old holder wakes. Its own lease knows it is lost: refused before anything is sent.
            QuotaException local = catchThrowableOfType(QuotaException.class,
                    () -> quota.deduct(account, 50, "old-2", old));
            assertThat(local.reason()).isEqualTo(QuotaException.Reason.LEASE_INVALID);
            // Its request that passed the validity check before the freeze reaches Redis: the fence refuses it.
            assertThat(quota.deduct(account, 50, "old-2", checkedBeforeFreezing))
                    .isEqualTo(new Outcome.StaleFence(old.fencingToken(), newer.fencingToken()));

            assertThat(List.of(quota.balance(account), entriesOf(account).size(),
                    redis.server().command("EXISTS", LAYOUT.requestKey(account, "old-2")))).isEqualTo(before);
            assertThat(quota.balance(account)).hasValue(890);
            assertThat(quota.deduct(account, 1, "new-2", newer)).as("the newer holder goes on").isInstanceOf(Outcome.Applied.class);
            newer.close();
            proxy.restore();
        }
    }

    @Test
    @DisplayName("a charge whose lock holder froze past its TTL while pricing deducts nothing")
    void chargeFrozenWhilePricing() {
        String namespace = "frozen-" + UUID.randomUUID();
        String account = "m-" + UUID.randomUUID();
        try (TcpProxy proxy = TcpProxy.start(redis.server().host(), redis.server().port());
             QuotaService frozen = QuotaService.create(settings("warden.quota.lock", "redis",
                     "warden.lock.endpoints", "redis://" + proxy.host() + ":" + proxy.port(),
                     "warden.lock.namespace", namespace, "warden.lock.ttl", "1s",
                     "warden.lock.request-timeout", "1s"));
             QuotaService other = QuotaService.create(settings("warden.quota.lock", "redis",
                     "warden.lock.namespace", namespace, "warden.lock.ttl", "10s"))) {
            frozen.open(account, 1_000);

            QuotaException e = catchThrowableOfType(QuotaException.class, () -> frozen.charge(account, "slow", balance -> {
                proxy.blackhole();
                // While this holder is stuck, its lock expires and another charge gets through.
                assertThat(other.charge(account, "fast", b -> 300)).isInstanceOf(Outcome.Applied.class);
                return 200;
            }));

            assertThat(e.reason()).isEqualTo(QuotaException.Reason.LEASE_INVALID);
            assertThat(other.balance(account)).hasValue(700);
            assertThat(entriesOf(account)).extracting(Journal.Entry::request).containsExactly("", "fast");
            proxy.restore();
        }
    }

    @Test
    @DisplayName("a lease of another lock cannot fence an account")
    void leaseOfAnotherLock() {
        try (LockClient locks = LockClient.create(URI.create(redis.server().uri() + "?namespace=other&connect-timeout="
                + ConnectTimeouts.CONNECT_TIMEOUT));
             QuotaService quota = QuotaService.create(settings())) {
            String account = "m-" + UUID.randomUUID();
            quota.open(account, 10);
            try (Lease lease = locks.lock("something-else").acquire()) {
                assertThatThrownBy(() -> quota.deduct(account, 1, "r", lease)).isInstanceOf(IllegalArgumentException.class);
            }
            assertThat(quota.balance(account)).hasValue(10);
        }
    }
}
