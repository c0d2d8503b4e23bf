package dev.warden.lock.redis;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisLockProviderTest {

    private final RedisLockProvider provider = new RedisLockProvider();

    private static LockConfig config(String... endpoints) {
        return new LockConfig("redis", List.of(endpoints), "test", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofSeconds(1), Map.of());
    }

    @Test
    void isFoundByServiceLoaderAsRedis() {
        assertThat(ServiceLoader.load(LockProvider.class).stream().map(ServiceLoader.Provider::get))
                .anySatisfy(p -> {
                    assertThat(p).isInstanceOf(RedisLockProvider.class);
                    assertThat(p.backend()).isEqualTo("redis");
                });
        assertThat(provider.optionNames()).isEmpty();
    }

    @Test
    void acceptsOneRedisOrRedissEndpoint() {
        assertThat(provider.validate(config("redis://127.0.0.1:6379"))).isEmpty();
        assertThat(provider.validate(config("redis://:secret@cache.internal:6380/3"))).isEmpty();
        assertThat(provider.validate(config("rediss://user:secret@cache.internal"))).isEmpty();
    }

    @Test
    void reportsEveryBadEndpoint() {
        List<String> problems = provider.validate(config("localhost:6379", "http://h:1", "redis://",
                "redis://h:99999", "redis-sentinel://h:26379/0#mymaster", "redis-socket:///tmp/redis.sock"));

        assertThat(problems).hasSize(7);
        assertThat(problems.get(0)).contains("Cluster/Sentinel endpoints are not supported yet").contains("got 6");
        assertThat(problems.get(1)).contains("'localhost:6379' is not a Redis URI");
        assertThat(problems.get(2)).contains("'http://h:1' is not a Redis URI");
        assertThat(problems.get(3)).contains("'redis://' is not a Redis URI");
        assertThat(problems.get(4)).contains("'redis://h:99999' is not a Redis URI").contains("99999");
        assertThat(problems.get(5)).contains("Sentinel");
        assertThat(problems.get(6)).contains("Unix domain socket");
    }

    @Test
    void refusesSeveralEndpoints() {
        assertThat(provider.validate(config("redis://a:6379", "redis://b:6379")))
                .containsExactly("Redis Cluster/Sentinel endpoints are not supported yet: configure exactly one"
                        + " redis:// or rediss:// endpoint (got 2)");
    }

    @Test
    void neverEchoesAPassword() {
        assertThat(provider.validate(config("redis://user:hunter2@h:1/notanumber")))
                .singleElement().asString().doesNotContain("hunter2").contains("***@h:1");
    }

    @Test
    void openRefusesAnInvalidConfiguration() {
        assertThatThrownBy(() -> provider.open(config("redis://a:1", "redis://b:1")))
                .isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("not supported yet");
    }
}
