package dev.warden.lock.redis;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** lock-api's acquire loop over this driver, found by ServiceLoader; the TCK covers the contract. */
class RedisLockClientTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    void aWaiterInAnotherClientTakesTheLockSoonAfterItIsReleased() throws Exception {
        URI uri = URI.create(redis.server().uri() + "?namespace=smoke&ttl=10s&connect-timeout=20s");
        try (LockClient first = LockClient.create(uri); LockClient second = LockClient.create(uri)) {
            assertThat(first.backend()).isEqualTo("redis");
            Lease held = first.lock("merchant-42").acquire();
            CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(
                    () -> second.lock("merchant-42").tryAcquire(Duration.ofSeconds(5)));
            Await.until(Duration.ofSeconds(5), "the waiter listens for the release", RedisLockClientTest::waiterSubscribed);
            assertThat(waiting).isNotDone();

            long releasedAt = System.nanoTime();
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
            Optional<Lease> next = waiting.get(5, TimeUnit.SECONDS);

            assertThat(next).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(Duration.ofMillis(500));
            assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(redis.server().command("GET", "{smoke:merchant-42}:lock"))
                    .asString().endsWith(":" + next.get().fencingToken());
            next.get().close();
        }
    }

    @Test
    void aContenderInTheSameClientTakesOverInTheReleasesOwnStepUnlessAnotherClientWaits() throws Exception {
        URI uri = URI.create(redis.server().uri() + "?namespace=handoff&ttl=10s&connect-timeout=20s");
        try (LockClient client = LockClient.create(uri)) {
            Lease held = client.lock("m").acquire();
            // An async acquire queues in the client before acquireAsync returns.
            CompletableFuture<Lease> next = client.lock("m").acquireAsync();
            long published = publishes();
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
            Lease taken = next.get(5, TimeUnit.SECONDS);
            assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(publishes()).as("handed on without a release message").isEqualTo(published);
            assertThat(redis.server().command("GET", "{handoff:m}:lock")).asString().endsWith(":" + taken.fencingToken());

            // Another client waits (its failed acquire sets this marker): a real release wakes it.
            redis.server().command("SET", "{handoff:m}:waiting", "1", "PX", "10000");
            CompletableFuture<Lease> after = client.lock("m").acquireAsync();
            assertThat(taken.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(publishes()).as("released and published").isEqualTo(published + 1);
            try (Lease last = after.get(5, TimeUnit.SECONDS)) {
                assertThat(last.fencingToken()).isGreaterThan(taken.fencingToken());
            }
            assertThat(held.release()).isEqualTo(ReleaseOutcome.ALREADY_RELEASED);
        }
    }

    private static long publishes() {
        String stats = String.valueOf(redis.server().command("INFO", "commandstats"));
        Matcher m = Pattern.compile("cmdstat_publish:calls=([0-9]+)").matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static boolean waiterSubscribed() {
        Object reply = redis.server().command("PUBSUB", "NUMSUB", "{smoke:merchant-42}:released");
        return reply instanceof java.util.List<?> l && l.size() == 2 && Long.valueOf(1).equals(l.get(1));
    }
}
