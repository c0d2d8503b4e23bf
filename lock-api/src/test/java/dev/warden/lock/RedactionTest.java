package dev.warden.lock;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RedactionTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @DisplayName("every credential form of an endpoint is masked; hosts, ports and paths stay readable")
    @CsvSource(delimiter = '|', value = {
            "redis://user:s3cret@host:6379/0 | redis://***@host:6379/0",
            "redis://s3cret@host | redis://***@host",
            "redis://:s3cret@host | redis://***@host",
            "redis:user:s3cret@host:6379 | redis:***@host:6379",
            "redis:s3cret@host | ***@host",
            "rediss://user:s3cret@host:6380 | rediss://***@host:6380",
            "redis-sentinel://user:s3cret@s1:26379,s2:26379/mymaster | redis-sentinel://***@s1:26379,s2:26379/mymaster",
            "redis-cluster://u:s3cret@h1,u:s3cret@h2 | redis-cluster://***@h1,***@h2",
            "rediss-cluster://u:s3cret@h1,rediss-cluster://u:s3cret@h2 | rediss-cluster://***@h1,rediss-cluster://***@h2",
            "etcd://root:s3cret@127.0.0.1:2379 | etcd://***@127.0.0.1:2379",
            "zookeeper://super:s3cret@zk:2181 | zookeeper://***@zk:2181",
            "http://u:s3cret@h:80/x | http://***@h:80/x",
            "https://u:s3cret@h/x?y=1 | https://***@h/x?y=1",
            "jdbc:postgresql://h:5432/db?user=u&password=s3cret&ssl=true | jdbc:postgresql://h:5432/db?user=u&password=***&ssl=true",
            "redis://h:6379?password=s3cret | redis://h:6379?password=***",
            "redis://h?auth-token=s3cret&db=1 | redis://h?auth-token=***&db=1",
            "redis://u:p@ss/w@rd@host:1 | redis://***@host:1",
            "endpoint 'redis://u:s3cret@h' is not | endpoint 'redis://***@h' is not",
            "[redis://u:s3cret@h1, redis://u:s3cret@h2] | [redis://***@h1, redis://***@h2]",
            "redis://host:6379 | redis://host:6379",
            "zookeeper://h1:2181,h2:2181 | zookeeper://h1:2181,h2:2181",
            "u:s3cret@h1,u:s3cret@h2 | ***@h1,***@h2",
    })
    void masksCredentials(String raw, String shown) {
        String redacted = Redaction.redact(raw);
        assertThat(redacted).isEqualTo(shown).doesNotContain("s3cret");
        assertThat(Redaction.redact(redacted)).as("redacting twice changes nothing").isEqualTo(redacted);
    }

    @Test
    @DisplayName("null and empty pass through")
    void nullAndEmpty() {
        assertThat(Redaction.redact(null)).isNull();
        assertThat(Redaction.redact("")).isEmpty();
    }

    @ParameterizedTest
    @DisplayName("a setting is secret by its name; where a secret is found is not")
    @CsvSource({"warden.lock.redis.password,true", "warden.quota.redis.password,true",
            "warden.lock.redis.tls.key-store-password,true", "password,true", "warden.lock.etcd.token,true",
            "warden.lock.redis.password-file,false", "warden.lock.redis.password-env,false",
            "warden.lock.redis.username,false", "warden.lock.ttl,false"})
    void secretKeys(String key, boolean secret) {
        assertThat(Redaction.isSecret(key)).isEqualTo(secret);
    }

    @Test
    @DisplayName("a settings map shows no secret value and no credential in an endpoint")
    void settingsMap() {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("warden.lock.endpoints", "redis://u:s3cret@h:6379");
        settings.put("warden.lock.redis.password", "s3cret");
        settings.put("warden.lock.redis.password-file", "/run/secrets/redis");
        assertThat(Redaction.settings(settings)).doesNotContain("s3cret").contains("redis://***@h:6379")
                .contains("password=***").contains("/run/secrets/redis");
    }
}
