package dev.warden.examples.spring;

import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.micrometer.MicrometerLedgerListener;
import dev.warden.micrometer.MicrometerLockObserver;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.testkit.RedisServerExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The example service end to end on a real Redis (testkit): the annotation, the fencing token, a lost lease, the metrics. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        // A short TTL: renewals every ~330 ms, so a deleted lock is noticed quickly.
        "warden.lock.ttl=1s",
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        "warden.lock.connect-timeout=20s", "warden.quota.connect-timeout=20s",
        "billing.settlement.steps=100",
        "billing.settlement.step=100ms",
        "billing.lock-wait=20s"})
class BillingApplicationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final Duration DEADLINE = Duration.ofSeconds(30);

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("warden.quota.endpoint", () -> redis.server().uri());
        registry.add("warden.lock.endpoints", () -> redis.server().uri());
    }

    @Autowired
    BillingService billing;

    @Autowired
    MeterRegistry meters;

    @Autowired
    LedgerConsumer ledger;

    @LocalServerPort
    int port;

    final HttpClient http = HttpClient.newHttpClient();

    static void await(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("within " + DEADLINE + ": " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    String get(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path).isEqualTo(200);
        return response.body();
    }

    double counter(String name, String... tags) {
        Counter c = meters.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    @DisplayName("@WithLock serialises concurrent charges of one merchant: each is priced on the balance the previous one left, under a higher token")
    void serialisesChargesOfOneMerchant() throws Exception {
        String merchant = "m-" + UUID.randomUUID();
        billing.open(merchant, 1_000_000);
        double appliedBefore = counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "applied");
        long grantsBefore = meters.get(MicrometerLockObserver.ACQUIRE).timer().count();

        int threads = 6;
        int perThread = 5;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Receipt>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                String order = "order-" + t + "-" + i;
                // 3% of the balance: a price computed on a stale balance would show as a gap below.
                futures.add(pool.submit(() -> billing.charge(merchant, order, 3)));
            }
        }
        List<Receipt> receipts = new ArrayList<>();
        for (Future<Receipt> f : futures) {
            receipts.add(f.get(60, TimeUnit.SECONDS));
        }
        pool.shutdown();

        receipts.sort(Comparator.comparingLong(Receipt::fencingToken));
        for (int i = 0; i < receipts.size(); i++) {
            Receipt r = receipts.get(i);
            assertThat(r.outcome()).isEqualTo("APPLIED");
            assertThat(r.balanceAfter()).isEqualTo(r.balanceBefore() - r.amount());
            if (i > 0) {
                Receipt previous = receipts.get(i - 1);
                assertThat(r.fencingToken()).as("a new grant per charge").isGreaterThan(previous.fencingToken());
                assertThat(r.balanceBefore()).as("priced on what the previous charge left").isEqualTo(previous.balanceAfter());
            }
        }
        // The token reached the deduction script: it is the account's fence high-water mark now.
        String fence = String.valueOf(redis.server().command("HGET", accountKey(merchant), "fence"));
        assertThat(Long.parseLong(fence)).isEqualTo(receipts.get(receipts.size() - 1).fencingToken());
        assertThat(billing.balance(merchant).getAsLong()).isEqualTo(receipts.get(receipts.size() - 1).balanceAfter());

        assertThat(counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "applied") - appliedBefore)
                .isEqualTo(threads * perThread);
        assertThat(meters.get(MicrometerLockObserver.ACQUIRE).timer().count() - grantsBefore)
                .as("one grant per charge").isEqualTo(threads * perThread);
    }

    /** quota-core's account key for the default layout: quota:{p<N>}:acct:<id>; found by scanning, not by re-deriving the hash. */
    String accountKey(String merchant) {
        Object keys = redis.server().command("KEYS", "quota:*:" + merchant);
        assertThat(keys).asList().hasSize(1);
        return String.valueOf(((List<?>) keys).get(0));
    }

    @Test
    @DisplayName("a lease lost under a running job is visible: the job stops, says why, and warden.lock.lost counts it")
    void lostLeaseIsVisible() throws Exception {
        String merchant = "m-" + UUID.randomUUID();
        billing.open(merchant, 1_000);
        double lostBefore = counter(MicrometerLockObserver.LOST, "reason", "not_owner");

        CompletableFuture<Settlement> job = CompletableFuture.supplyAsync(() -> billing.settle(merchant));
        String lockKey = "{billing:quota:" + merchant + "}:lock";
        await("the job holds the merchant's lock", () -> Long.valueOf(1).equals(redis.server().command("EXISTS", lockKey)));
        redis.server().command("DEL", lockKey);

        Settlement settlement = job.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(settlement.lostReason()).isEqualTo("NOT_OWNER");
        assertThat(settlement.stepsDone()).isLessThan(settlement.steps());
        assertThat(settlement.fencingToken()).isPositive();
        await("the loss is counted", () -> counter(MicrometerLockObserver.LOST, "reason", "not_owner") - lostBefore == 1);
        assertThat(counter(MicrometerLockObserver.RELEASES, "outcome", "lost")).isGreaterThanOrEqualTo(1);
    }

    @Test
    @DisplayName("metrics: Warden's meters in the registry and on /actuator/prometheus; health shows the lock, quota and ledger")
    void metricsAndHealth() throws Exception {
        String merchant = "m-" + UUID.randomUUID();
        billing.open(merchant, 10_000);
        double applied = counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "applied");
        double insufficient = counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "insufficient");
        get("/merchants/" + merchant + "/balance");
        HttpResponse<String> charged = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/merchants/" + merchant + "/charges/o-1?percent=10"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(charged.statusCode()).isEqualTo(200);
        assertThat(charged.body()).contains("\"outcome\":\"APPLIED\"").contains("\"fencingToken\":");
        billing.charge(merchant, "o-2", 100);
        billing.charge(merchant, "o-3", 100);

        assertThat(counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "applied") - applied).isEqualTo(2);
        assertThat(counter(MeteredQuotaService.OUTCOMES, "operation", "deduct", "outcome", "insufficient") - insufficient)
                .isEqualTo(1);
        Timer latency = meters.get(MeteredQuotaService.LATENCY).tag("operation", "deduct").timer();
        assertThat(latency.count()).isPositive();
        assertThat(meters.get(MicrometerLockObserver.HELD).tag("backend", "redis").timer().count()).isPositive();
        await("the ledger drained the journal", () -> counter(MicrometerLedgerListener.ENTRIES, "result", "applied") >= 3
                && ledger.backlog() == 0);

        String prometheus = get("/actuator/prometheus");
        assertThat(prometheus)
                .contains("warden_lock_acquire_seconds_count{application=\"billing\",backend=\"redis\",kind=\"lock\"}")
                .contains("warden_lock_held_seconds_count{application=\"billing\",backend=\"redis\",kind=\"lock\"}")
                .contains("warden_lock_active{application=\"billing\",backend=\"redis\",kind=\"lock\"}")
                .contains("warden_lock_renewals_total")
                .contains("warden_quota_outcomes_total{application=\"billing\",operation=\"deduct\",outcome=\"applied\"}")
                .contains("warden_quota_outcomes_total{application=\"billing\",operation=\"deduct\",outcome=\"insufficient\"}")
                .contains("warden_quota_latency_seconds_count{application=\"billing\",operation=\"deduct\"}")
                .contains("warden_ledger_entries_total{application=\"billing\",result=\"applied\"}")
                .contains("warden_ledger_backlog{application=\"billing\",state=\"pending\"}")
                .contains("warden_ledger_partitions{application=\"billing\"}")
                .contains("warden_lock_acquisition_seconds_count")
                .contains("warden_quota_deduction_seconds_count")
                .doesNotContain("lock=\"quota:");

        String health = get("/actuator/health");
        for (String component : List.of("wardenLock", "wardenQuota", "wardenLedger")) {
            // {"wardenLock":{"details":{...},"status":"UP"}: details hold no nested object.
            assertThat(health).containsPattern("\"" + component + "\":\\{(\"details\":\\{[^{}]*\\},)?\"status\":\"UP\"");
        }
        assertThat(health).contains("\"backlog\":0");
    }
}
