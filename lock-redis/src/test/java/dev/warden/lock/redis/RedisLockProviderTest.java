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
        return config(Map.of(), endpoints);
    }

    private static LockConfig config(Map<String, String> options, String... endpoints) {
        return new LockConfig("redis", List.of(endpoints), "test", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofSeconds(1), options);
    }

    @Test
    void isFoundByServiceLoaderAsRedis() {
        assertThat(ServiceLoader.load(LockProvider.class).stream().map(ServiceLoader.Provider::get))
                .anySatisfy(p -> {
                    assertThat(p).isInstanceOf(RedisLockProvider.class);
                    assertThat(p.backend()).isEqualTo("redis");
                });
        assertThat(provider.optionNames()).contains("address-map", "username", "password", "password-file", "password-env",
                "tls.trust-store", "tls.key-store", "tls.trust-store-password-env");
    }

    @Test
    void acceptsOneRedisOrRedissEndpoint() {
        assertThat(provider.validate(config("redis://127.0.0.1:6379"))).isEmpty();
        assertThat(provider.validate(config("redis://:secret@cache.internal:6380/3"))).isEmpty();
        assertThat(provider.validate(config("rediss://user:secret@cache.internal"))).isEmpty();
    }

    @Test
    void acceptsSentinelAndClusterUrisAsTheSettingSplitsThemAndAsLockClientCreateWritesThem() {
        // warden.lock.endpoints=redis-sentinel://s1:26379,s2:26379/mymaster arrives split at the comma
        assertThat(provider.validate(config("redis-sentinel://s1:26379", "s2:26379/mymaster"))).isEmpty();
        assertThat(provider.validate(config("redis-sentinel://s1:26379/mymaster", "redis-sentinel://s2:26379/mymaster"))).isEmpty();
        assertThat(provider.validate(config("rediss-sentinel://app:secret@s1", "s2", "s3/payments"))).isEmpty();
        assertThat(provider.validate(config("redis-cluster://n1:7000", "n2:7001", "n3:7002"))).isEmpty();
        assertThat(provider.validate(config("rediss-cluster://:secret@n1"))).isEmpty();
    }

    @Test
    void reportsEachBadEndpoint() {
        assertThat(provider.validate(config("localhost:6379"))).singleElement().asString().contains("is not a Redis URI");
        assertThat(provider.validate(config("http://h:1"))).singleElement().asString().contains("scheme 'http'");
        assertThat(provider.validate(config("redis://"))).singleElement().asString().contains("'redis://' is not a Redis URI");
        assertThat(provider.validate(config("redis://h:99999"))).singleElement().asString().contains("99999");
        assertThat(provider.validate(config("redis-sentinel://h:26379"))).singleElement().asString().contains("names no master");
        assertThat(provider.validate(config("redis-socket:///tmp/redis.sock"))).singleElement().asString().contains("scheme");
        assertThat(provider.validate(config("redis-cluster://h:1/3"))).singleElement().asString().contains("only database 0");
        assertThat(provider.validate(config("redis-cluster://h:1", "h2:x"))).singleElement().asString().contains("'h2:x' is not host[:port]");
        assertThat(provider.validate(config("redis-cluster://h:1", "redis-sentinel://h2:1/m"))).singleElement().asString()
                .contains("mixes the schemes");
    }

    @Test
    void refusesSeveralPlainEndpointsAndSaysHowToNameATopology() {
        assertThat(provider.validate(config("redis://a:6379", "redis://b:6379"))).singleElement().asString()
                .contains("several Redis endpoints (2)").contains("redis-sentinel://").contains("redis-cluster://");
    }

    @Test
    void checksTheAddressMap() {
        assertThat(provider.validate(config(Map.of("address-map", "10.0.0.1:6379=127.0.0.1:16379,10.0.0.2:6379=127.0.0.1:16380"),
                "redis-cluster://n1"))).isEmpty();
        assertThat(provider.validate(config(Map.of("address-map", "10.0.0.1:6379"), "redis-cluster://n1")))
                .singleElement().asString().contains("address-map").contains("announced-host:port=reachable-host:port");
    }

    @Test
    void neverEchoesAPassword() {
        assertThat(provider.validate(config("redis://user:hunter2@h:1/notanumber")))
                .singleElement().asString().doesNotContain("hunter2").contains("***@h:1");
        assertThat(provider.validate(config("redis-sentinel://user:hunter2@h:1")))
                .singleElement().asString().doesNotContain("hunter2");
        assertThat(provider.validate(config("redis-cluster://h:1", "user:hunter2@h2:x")))
                .singleElement().asString().doesNotContain("hunter2");
    }

    @Test
    void openRefusesAnInvalidConfiguration() {
        assertThatThrownBy(() -> provider.open(config("redis://a:1", "redis://b:1")))
                .isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("several Redis endpoints");
    }
}
