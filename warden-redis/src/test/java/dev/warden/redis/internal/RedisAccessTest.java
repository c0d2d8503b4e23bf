package dev.warden.redis.internal;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RedisAccessTest {

    private static final String PREFIX = "warden.quota.redis.";

    @Test
    void theDataNodesAndTheSentinelsLogInAsEachIsConfigured(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("sentinel-password"), "sentinel-secret\n");
        RedisAccess access = RedisAccess.read(PREFIX, Map.of("username", "app", "password-env", "APP_PW",
                "sentinel.username", "watch", "sentinel.password-file", file.toString()), name -> name.equals("APP_PW") ? "app-secret" : null);
        RedisURI uri = RedisEndpoint.parse("redis-sentinel://s1,s2/main").uris().get(0);
        access.applyTo(uri);
        RedisCredentials data = uri.getCredentialsProvider().resolveCredentials().block();
        assertThat(data.getUsername()).isEqualTo("app");
        assertThat(new String(data.getPassword())).isEqualTo("app-secret");
        assertThat(uri.getSentinels()).allSatisfy(s -> {
            RedisCredentials c = s.getCredentialsProvider().resolveCredentials().block();
            assertThat(c.getUsername()).isEqualTo("watch");
            assertThat(new String(c.getPassword())).isEqualTo("sentinel-secret");
        });
        assertThat(access.toString()).contains("app", "watch").doesNotContain("app-secret", "sentinel-secret");
    }

    @Test
    void nothingSetMeansNoLoginAndTheJvmsTrust() {
        RedisAccess access = RedisAccess.read(PREFIX, Map.of(), name -> null);
        assertThat(access).isEqualTo(RedisAccess.none(PREFIX));
        assertThat(access.sslOptions()).isNull();
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://h"), Map.of(), name -> null)).isEmpty();
    }

    @Test
    void everyProblemIsNamedUnderItsPrefixWithoutTheSecret(@TempDir Path dir) {
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://h"), Map.of("username", "app"), n -> null))
                .singleElement().asString().startsWith(PREFIX + "username needs a password");
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://u:pw@h"), Map.of("password", "s3cret"), n -> null))
                .singleElement().asString().contains("keep one").doesNotContain("s3cret");
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://h"), Map.of("sentinel.password", "s3cret"), n -> null))
                .singleElement().asString().contains(PREFIX + "sentinel.* settings apply to redis-sentinel://");
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://h"), Map.of("tls.trust-store", dir.toString() + "/none.p12"),
                n -> null)).anySatisfy(p -> assertThat(p).contains(PREFIX + "tls.* is set but the endpoint is not rediss://"))
                .anySatisfy(p -> assertThat(p).contains("is not a readable file"));
        assertThat(RedisAccess.problems(PREFIX, List.of("redis://h"), Map.of("password", "a", "password-env", "B"), n -> null))
                .singleElement().asString().contains("set only one").doesNotContain("=a");
    }
}
