package dev.warden.adopters;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.RedisServer;
import dev.warden.adopters.support.Smoke;
import dev.warden.lock.LockClient;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.spring.CurrentLease;
import dev.warden.spring.WithLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@SpringBootTest(classes = StarterAdopterTest.App.class, properties = "warden.lock.backend=redis")
class StarterAdopterTest {

    static final RedisServer redis = RedisServer.start();

    @DynamicPropertySource
    static void endpoints(DynamicPropertyRegistry registry) {
        registry.add("warden.lock.endpoints", redis::uri);
        registry.add("warden.quota.endpoint", redis::uri);
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    // Classes nested in a test are not scanned: import the service.
    @SpringBootApplication
    @Import(Billing.class)
    static class App {
    }

    @Service
    static class Billing {
        @WithLock(name = "'quota:' + #p0", waitFor = "2s")
        public long token(String merchant) {
            return CurrentLease.get().fencingToken();
        }
    }

    @Autowired
    LockClient locks;

    @Autowired
    QuotaService quota;

    @Autowired
    Billing billing;

    @Test
    void lockClientFromSettings() {
        Smoke.acquireFenceRelease(locks);
    }

    @Test
    void withLockAndQuota() {
        assertTrue(quota.open("m-1", 100) instanceof Outcome.Applied);
        long first = billing.token("m-1");
        long second = billing.token("m-1");
        assertTrue(second > first, "a new grant, a higher token");
        assertEquals(90, ((Outcome.Applied) quota.deduct("m-1", 10, "r-1")).balance());
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
