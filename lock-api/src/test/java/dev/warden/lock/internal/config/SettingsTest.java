package dev.warden.lock.internal.config;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SettingsTest {

    /** A provider that only answers configuration questions; it never connects. */
    private record Named(String backend, Set<String> optionNames, Duration ttlGranularity) implements LockProvider {
        Named(String backend) {
            this(backend, Set.of("client-name"), Duration.ofMillis(1));
        }

        @Override
        public List<String> validate(LockConfig config) {
            return config.endpoints().stream().filter(e -> !e.startsWith(backend + "://"))
                    .map(e -> "endpoint " + e + " is not a " + backend + " URI").toList();
        }

        @Override
        public LockDriver open(LockConfig config) {
            throw new AssertionError("not connecting in a unit test");
        }
    }

    private static LockException configError(Map<String, ?> settings, LockProvider... providers) {
        try {
            Settings.resolve(settings, List.of(providers));
        } catch (LockException e) {
            return e;
        }
        throw new AssertionError("expected a configuration error");
    }

    @Test
    @DisplayName("valid settings resolve with defaults")
    void defaults() {
        var r = Settings.resolve(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "other.key", "ignored"), List.of(new Named("redis"), new Named("etcd")));
        assertThat(r.settings().lock().namespace()).isEqualTo("warden");
        assertThat(r.settings().lock().ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(r.settings().lock().requestTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(r.settings().lock().endpoints()).containsExactly("redis://h:1");
        assertThat(r.provider().backend()).isEqualTo("redis");
    }

    @Test
    @DisplayName("every problem is reported in one message")
    void allProblemsAtOnce() {
        LockException e = configError(Map.of("warden.lock.backend", "redis", "warden.lock.ttl", "-3s",
                "warden.lock.namespace", "a b", "warden.lock.request-timeout", "soon", "warden.lock.tll", "1s",
                "warden.lock.redis.colour", "blue"), new Named("redis"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("endpoints is required", "ttl", "namespace 'a b'", "request-timeout",
                "unknown setting warden.lock.tll", "unknown setting warden.lock.redis.colour", "client-name");
    }

    @Test
    @DisplayName("backend validation runs once the common settings are valid")
    void providerValidation() {
        LockException e = configError(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "http://x"),
                new Named("redis"));
        assertThat(e.getMessage()).contains("endpoint http://x is not a redis URI");
    }

    @Test
    @DisplayName("no provider, or two, is an error naming what was found")
    void providerLookup() {
        Map<String, String> s = Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", "zk://h:1");
        LockException none = configError(s, new Named("redis"));
        assertThat(none.reason()).isEqualTo(LockException.Reason.NO_PROVIDER);
        assertThat(none.getMessage()).contains("zookeeper", "found: redis");
        LockException two = configError(s, new Named("zookeeper"), new Named("zookeeper"));
        assertThat(two.reason()).isEqualTo(LockException.Reason.AMBIGUOUS_PROVIDER);
    }

    @Test
    @DisplayName("a TTL finer than the backend's granularity is refused")
    void granularity() {
        LockException e = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.ttl", "1500ms"), new Named("etcd", Set.of(), Duration.ofSeconds(1)));
        assertThat(e.getMessage()).contains("multiple of PT1S");
    }

    @Test
    @DisplayName("a missing provider is reported together with every other problem")
    void missingProviderWithOtherProblems() {
        LockException e = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.ttl", "50ms", "warden.lock.colour", "red"), new Named("redis"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.NO_PROVIDER);
        assertThat(e.getMessage()).contains("no lock provider for backend 'etcd'", "ttl must be at least 100ms",
                "unknown setting warden.lock.colour");
    }

    @Test
    @DisplayName("options of another known backend may sit beside the chosen one's; durations are bounded")
    void otherBackendsOptionsAndBounds() {
        var r = Settings.resolve(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "warden.lock.zookeeper.lost-on", "lost", "warden.lock.ttl", Duration.ofSeconds(2)), List.of(new Named("redis")));
        assertThat(r.settings().lock().ttl()).isEqualTo(Duration.ofSeconds(2));
        assertThat(r.settings().lock().options()).isEmpty();
        LockException e = configError(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "warden.lock.request-timeout", "3000000h"), new Named("redis"));
        assertThat(e.getMessage()).contains("request-timeout must be at most 365 days");
    }

    @Test
    @DisplayName("passwords never reach a message")
    void masksCredentials() {
        assertThat(Settings.masked("redis://user:s3cret@h:6379,redis://:pw@h2:1"))
                .isEqualTo("redis://***@h:6379,redis://***@h2:1");
    }

    @Test
    @DisplayName("the URI form names backend, endpoints and settings")
    void uriForm() {
        Map<String, String> s = Settings.fromUri(URI.create("etcd://a:2379,b:2379?ttl=10s&namespace=billing"));
        assertThat(s).containsEntry("warden.lock.backend", "etcd")
                .containsEntry("warden.lock.endpoints", "etcd://a:2379,etcd://b:2379")
                .containsEntry("warden.lock.ttl", "10s")
                .containsEntry("warden.lock.namespace", "billing");
        assertThatThrownBy(() -> Settings.fromUri(URI.create("redis:nothing")))
                .isInstanceOf(LockException.class);
    }

    @Test
    @DisplayName("durations read in short and ISO forms")
    void durations() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("PT1.5S")).isEqualTo(Duration.ofMillis(1500));
        assertThatThrownBy(() -> Durations.parse("1.5s")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("outage tolerance may be zero, max hold time must be positive; both default sensibly")
    void outageToleranceAndMaxHoldTime() {
        Map<String, String> base = Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1");
        var defaults = Settings.resolve(base, List.of(new Named("redis")));
        assertThat(defaults.settings().outageTolerance()).isEqualTo(Duration.ofSeconds(30));
        assertThat(defaults.settings().maxHoldTime()).isEmpty();
        var set = Settings.resolve(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "warden.lock.outage-tolerance", "0s", "warden.lock.max-hold-time", "2m"), List.of(new Named("redis")));
        assertThat(set.settings().outageTolerance()).isZero();
        assertThat(set.settings().maxHoldTime()).contains(Duration.ofMinutes(2));
        LockException e = configError(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "warden.lock.outage-tolerance", "-PT1S", "warden.lock.max-hold-time", "0s"), new Named("redis"));
        // The one grammar has no signs: a negative duration is not a duration at all.
        assertThat(e.getMessage()).contains("outage-tolerance: '-PT1S' is not a duration", "max-hold-time must be positive");
    }

    @Test
    @DisplayName("the migrating step: the backend left is resolved with its own endpoints and options, the rest shared")
    void migrationResolves() {
        var r = Settings.resolve(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:2379",
                "warden.lock.migrate-from", "redis", "warden.lock.migrate-from-endpoints", "redis://r:6379",
                "warden.lock.redis.client-name", "a", "warden.lock.etcd.client-name", "b", "warden.lock.ttl", "4s"),
                List.of(new Named("redis"), new Named("etcd")));
        assertThat(r.settings().lock().backend()).isEqualTo("etcd");
        assertThat(r.settings().lock().options()).containsExactly(Map.entry("client-name", "b"));
        Settings.Leaving left = r.leaving().orElseThrow();
        assertThat(left.provider().backend()).isEqualTo("redis");
        assertThat(left.config().endpoints()).containsExactly("redis://r:6379");
        assertThat(left.config().options()).containsExactly(Map.entry("client-name", "a"));
        assertThat(left.config().ttl()).isEqualTo(Duration.ofSeconds(4));
        assertThat(left.config().namespace()).isEqualTo(r.settings().lock().namespace());
    }

    @Test
    @DisplayName("a migration that names one backend twice, lacks the endpoints of the backend left, or names endpoints"
            + " without it, is refused with every problem at once")
    void badMigrations() {
        LockException twice = configError(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://h:1",
                "warden.lock.migrate-from", "redis", "warden.lock.migrate-from-endpoints", "redis://h:2"), new Named("redis"));
        assertThat(twice.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(twice.getMessage()).contains("warden.lock.migrate-from names redis, the backend the client moves to");

        LockException noEndpoints = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.migrate-from", "redis", "warden.lock.redis.nonsense", "x"), new Named("redis"), new Named("etcd"));
        assertThat(noEndpoints.getMessage()).contains("warden.lock.migrate-from-endpoints is required")
                .contains("unknown setting warden.lock.redis.nonsense");

        LockException orphan = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.migrate-from-endpoints", "redis://h:2"), new Named("redis"), new Named("etcd"));
        assertThat(orphan.getMessage()).contains("warden.lock.migrate-from-endpoints is set without warden.lock.migrate-from");

        LockException wrongEndpoint = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.migrate-from", "redis", "warden.lock.migrate-from-endpoints", "etcd://h:2"),
                new Named("redis"), new Named("etcd"));
        assertThat(wrongEndpoint.getMessage()).contains("warden.lock.migrate-from redis: endpoint etcd://h:2 is not a redis URI");

        LockException missing = configError(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", "etcd://h:1",
                "warden.lock.migrate-from", "jdbc", "warden.lock.migrate-from-endpoints", "jdbc:x"), new Named("etcd"));
        assertThat(missing.reason()).isEqualTo(LockException.Reason.NO_PROVIDER);
        assertThat(missing.getMessage()).contains("no lock provider for backend 'jdbc'");
    }
}
