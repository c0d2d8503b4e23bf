package dev.warden.adopters;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.RedisServer;
import dev.warden.adopters.support.Smoke;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

class QuotaCoreAdopterTest {

    @Test
    void openDeduct() {
        try (RedisServer redis = RedisServer.start();
             QuotaService quota = QuotaService.create(Map.of("warden.quota.endpoint", redis.uri()))) {
            String account = "merchant-" + UUID.randomUUID();
            assertInstanceOf(Outcome.Applied.class, quota.open(account, 10_000));
            Outcome deducted = quota.deduct(account, 250, "order-1");
            assertEquals(9_750, assertInstanceOf(Outcome.Applied.class, deducted).balance());
            assertEquals(Outcome.Status.DUPLICATE, quota.deduct(account, 250, "order-1").status(), "a replay deducts nothing");
            assertEquals(9_750, quota.balance(account).orElseThrow());
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
