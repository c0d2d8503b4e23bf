package dev.warden.examples.spring;

import dev.warden.testkit.RedisServer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import java.util.Arrays;
import java.util.Map;

/**
 * A small billing service on Warden's Spring Boot starter: charges run under the merchant's lock
 * ({@code @WithLock}) and deduct with the lease's fencing token; the ledger drains the journal into an
 * embedded H2; Actuator serves {@code /actuator/health} and {@code /actuator/prometheus}.
 *
 * <p>Run it with {@code ./mvnw -pl examples-spring -am install -DskipTests} then
 * {@code ./mvnw -pl examples-spring exec:java}. Without {@code --warden.quota.endpoint=redis://...} it starts
 * a Redis of its own on a free loopback port (a local {@code redis-server}, as the tests use), and stops it on exit.
 */
@SpringBootApplication
public class BillingApplication {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(BillingApplication.class);
        RedisServer embedded = null;
        if (Arrays.stream(args).noneMatch(a -> a.startsWith("--warden.quota.endpoint"))
                && System.getenv("WARDEN_QUOTA_ENDPOINT") == null) {
            embedded = RedisServer.start();
            app.setDefaultProperties(Map.of("warden.quota.endpoint", embedded.uri(), "warden.lock.endpoints", embedded.uri()));
        }
        if (embedded != null) {
            RedisServer server = embedded;
            // Registered first, so destroyed last: after the lock client, the quota service and the ledger.
            app.addInitializers(context -> ((DefaultListableBeanFactory) context.getBeanFactory())
                    .registerDisposableBean("embeddedRedis", server::close));
        }
        app.run(args);
    }
}
