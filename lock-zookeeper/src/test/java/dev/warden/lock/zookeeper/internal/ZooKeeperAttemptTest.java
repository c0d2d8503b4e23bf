package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The driver's attempts against a real server, looking at what its ZooKeeper connection sends. */
@DisplayName("ZooKeeper attempts")
class ZooKeeperAttemptTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    private static final Duration TTL = Duration.ofSeconds(30);

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    @Test
    @DisplayName("the first poll sends its read of the queue and the token floor, one request, right behind the create,"
            + " before the create has answered, and grants from that read")
    void firstPollReadsTheQueueBehindTheCreate() throws Exception {
        LockConfig config = new LockConfig("zookeeper", List.of(server().endpoint()), "attempts", TTL,
                Duration.ofSeconds(10), Duration.ofSeconds(10), Map.of());
        try (ZooKeeperDriver driver = ZooKeeperDriver.open(config)) {
            // The lock's parents exist, as after the name's first acquire.
            Grant warm = driver.attempt("pipelined", "warm").poll(TTL).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS).orElseThrow();
            assertThat(driver.release(warm).toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();

            long before = requestsSubmitted(driver);
            CompletableFuture<Optional<Grant>> polled;
            server().pause();
            try {
                LockAttempt attempt = driver.attempt("pipelined", "owner");
                polled = attempt.poll(TTL).toCompletableFuture();
                // Nothing answers while the server is frozen: a second request means the read did not wait.
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (requestsSubmitted(driver) - before < 2 && System.nanoTime() - end < 0) {
                    Thread.sleep(10);
                }
                // The create, and the queue's and the token floor's read in one request behind it.
                assertThat(requestsSubmitted(driver) - before).as("requests out before any reply").isEqualTo(2);
                assertThat(polled).isNotDone();
            } finally {
                server().resume();
            }
            Grant grant = polled.get(10, TimeUnit.SECONDS).orElseThrow();
            assertThat(requestsSubmitted(driver) - before).as("granted from the read sent with the create").isEqualTo(2);
            assertThat(driver.release(grant).toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(requestsSubmitted(driver) - before).as("release is one delete").isEqualTo(3);
        }
    }

    /** The next request id of the driver's ZooKeeper connection: one per request submitted, pings aside. */
    private static long requestsSubmitted(ZooKeeperDriver driver) throws Exception {
        String connection = driver.zooKeeper().toString();
        Matcher m = Pattern.compile(" xid:(\\d+)").matcher(connection);
        assertThat(m.find()).as(connection).isTrue();
        return Long.parseLong(m.group(1));
    }
}
