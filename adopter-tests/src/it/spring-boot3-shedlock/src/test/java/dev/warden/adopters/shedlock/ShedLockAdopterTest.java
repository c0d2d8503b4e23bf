package dev.warden.adopters.shedlock;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.PeriodLog;
import dev.warden.adopters.support.RedisServer;
import dev.warden.adopters.support.Smoke;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.spring.CurrentLease;
import dev.warden.spring.WithLock;
import dev.warden.spring.autoconfigure.WardenHealthAutoConfiguration;
import dev.warden.spring.boot3.WardenBoot3HealthAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.task.TaskDecorator;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two instances of the application (two contexts, two Warden clients) on one Redis, the second one's clock 2 s
 * late: its scheduler fires each period 2 s after the first's. The settlement job still runs once per period.
 */
class ShedLockAdopterTest {

    static final RedisServer redis = RedisServer.start();

    @AfterAll
    static void stop() {
        redis.close();
    }

    final PeriodLog log = new PeriodLog();

    /** A bean with {@code @WithLock}: the starter's advice on this line's Spring Framework. */
    public static class Guarded {
        @WithLock(name = "'guarded:' + #p0", waitFor = "2s")
        public long token(String key) {
            return CurrentLease.get().fencingToken();
        }
    }

    /** An instance of the application; its scheduler's fires and its job's runs go to {@link #log}. */
    ConfigurableApplicationContext start(String instance, Duration clockOffset, String... properties) {
        return new SpringApplicationBuilder(SettlementApplication.class)
                .main(SettlementApplication.class)
                .web(WebApplicationType.NONE)
                .properties("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.uri(),
                        "warden.lock.connect-timeout=20s", // connecting is not what this checks; a loaded host is slow
                        "settlement.instance=" + instance, "settlement.clock-offset=" + clockOffset,
                        "warden.quota.endpoint=" + redis.uri(), "spring.main.banner-mode=off")
                .properties(properties)
                .initializers(context -> {
                    GenericApplicationContext app = (GenericApplicationContext) context;
                    app.registerBean(SettlementLedger.class, () -> (period, who, token) -> log.ran(who, period, token));
                    app.registerBean(Guarded.class);
                    // Every fire of the scheduler, before ShedLock tries the lock, for the period the host's clock says.
                    app.registerBean(TaskDecorator.class, () -> {
                        Clock clock = app.getBean(Clock.class);
                        return task -> () -> {
                            log.fired(instance, Settlement.periodOf(clock.instant()));
                            task.run();
                        };
                    });
                })
                .run();
    }

    @Test
    void oncePerPeriodWithASecondInstanceTwoSecondsLate() throws Exception {
        // The on-time instance also exposes the wardenlocks endpoint over JMX (one instance: the MBean name is fixed).
        try (ConfigurableApplicationContext onTime = start("on-time", Duration.ZERO, "spring.jmx.enabled=true",
                "management.endpoints.jmx.exposure.include=wardenlocks")) {
            log.await(Duration.ofSeconds(20), "a first run on the on-time instance", e -> PeriodLog.runs(e, "on-time") >= 1);

            // The starter on Boot 3.5: the health indicators of warden-spring-boot3-compat (Boot 4's configuration
            // dormant), meters, @WithLock, the quota service and the wardenlocks endpoint.
            assertEquals(1, onTime.getBeanNamesForType(WardenBoot3HealthAutoConfiguration.class).length);
            assertEquals(0, onTime.getBeanNamesForType(WardenHealthAutoConfiguration.class).length);
            for (String indicator : List.of("wardenLockHealthIndicator", "wardenQuotaHealthIndicator")) {
                assertEquals(Status.UP, onTime.getBean(indicator, HealthIndicator.class).health().getStatus(), indicator);
            }
            Timer acquired = onTime.getBean(MeterRegistry.class).find("warden.lock.acquire").timer();
            assertNotNull(acquired, "no warden.lock.acquire timer");
            assertTrue(acquired.count() >= 1, "the job's acquisition is metered");
            Smoke.acquireFenceRelease(onTime.getBean(LockClient.class));
            Guarded guarded = onTime.getBean(Guarded.class);
            long first = guarded.token("m-1");
            assertTrue(guarded.token("m-1") > first, "@WithLock: a new grant, a higher token");
            QuotaService quota = onTime.getBean(QuotaService.class);
            assertTrue(quota.open("m-1", 100) instanceof Outcome.Applied);
            assertEquals(90, ((Outcome.Applied) quota.deduct("m-1", 10, "r-1")).balance());
            assertHolderOverJmx(onTime.getBean(LockClient.class));

            try (ConfigurableApplicationContext late = start("late", Duration.ofSeconds(-2))) {
                log.await(Duration.ofSeconds(30), "the late instance firing 3 times for a period already run",
                        e -> PeriodLog.lateFiresOnRunPeriods(e, "late") >= 3);
            }
        }
        // Exactly once per period: the late instance, firing 2 s after a period's run, found the lock held each time.
        log.assertOncePerPeriod("late", Settlement.PERIOD, 3);
        List<PeriodLog.Event> events = log.events();
        assertTrue(events.stream().filter(PeriodLog.Event::run).count() >= 3, () -> "runs: " + events);
        System.out.println("[adopter] %s: %d runs on time, %d late; the late instance fired %d times for a period already run"
                .formatted("spring-boot3-shedlock", PeriodLog.runs(events, "on-time"), PeriodLog.runs(events, "late"),
                        PeriodLog.lateFiresOnRunPeriods(events, "late")));
    }

    /** The wardenlocks endpoint, as an operator reaches it over JMX, shows a lock's holder and token. */
    static void assertHolderOverJmx(LockClient locks) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(new ObjectName("org.springframework.boot:type=Endpoint,name=Wardenlocks,*"), null);
        ObjectName boot = new ObjectName("org.springframework.boot:*");
        assertEquals(1, names.size(), () -> "wardenlocks MBeans: " + names + "; Spring Boot's: " + server.queryNames(boot, null));
        try (Lease lease = locks.lock("adopter-endpoint").acquire()) {
            Object holder = server.invoke(names.iterator().next(), "holder", new Object[] {"adopter-endpoint"},
                    new String[] {String.class.getName()});
            assertTrue(holder instanceof Map<?, ?> m && Long.valueOf(lease.fencingToken()).equals(((Number) m.get("token")).longValue()),
                    () -> "holder over JMX: " + holder + ", the lease's token " + lease.fencingToken());
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
