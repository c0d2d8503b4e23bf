package dev.warden.redis.internal;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisEndpointTest {

    @Test
    void oneServerWithItsDatabaseAndLogin() {
        RedisEndpoint e = RedisEndpoint.parse("redis://app:s3cret@h:6380/2");
        assertThat(e.kind()).isEqualTo(RedisEndpoint.Kind.SERVER);
        RedisURI uri = e.uris().get(0);
        assertThat(uri.getDatabase()).isEqualTo(2);
        assertThat(uri.getCredentialsProvider().resolveCredentials().block().getUsername()).isEqualTo("app");
        assertThat(e).hasToString("redis://h:6380/2");
    }

    @Test
    void oneSettingOrItsCommaSplitEntriesNameTheSameSentinels() {
        RedisEndpoint whole = RedisEndpoint.parse("rediss-sentinel://:pw@s1,s2:26380/pay%20ments");
        RedisEndpoint split = RedisEndpoint.parse(List.of("rediss-sentinel://:pw@s1", "rediss-sentinel://s2:26380/pay%20ments"));
        for (RedisEndpoint e : List.of(whole, split)) {
            assertThat(e.kind()).isEqualTo(RedisEndpoint.Kind.SENTINEL);
            assertThat(e.uris().get(0).isSsl()).isTrue();
            assertThat(e.uris().get(0).getSentinelMasterId()).isEqualTo("pay ments");
            assertThat(e).hasToString("rediss-sentinel://s1:26379,s2:26380/pay ments");
        }
    }

    @Test
    void clusterSeedsDefaultToPort6379() {
        RedisEndpoint e = RedisEndpoint.parse("redis-cluster://n1:7000,[::1],n3");
        assertThat(e.kind()).isEqualTo(RedisEndpoint.Kind.CLUSTER);
        assertThat(e.uris()).extracting(RedisURI::getPort).containsExactly(7000, 6379, 6379);
        assertThat(e).hasToString("redis-cluster://n1:7000,::1:6379,n3:6379");
    }

    @Test
    void eachParseGivesNewUrisForTheCallerToConfigure() {
        String text = "redis://h:1";
        assertThat(RedisEndpoint.parse(text).uris().get(0)).isNotSameAs(RedisEndpoint.parse(text).uris().get(0));
    }

    @Test
    void everyProblemIsNamedWithoutTheCredentials() {
        assertThat(RedisEndpoint.problems(List.of())).singleElement().asString().startsWith("no Redis endpoint");
        assertThat(RedisEndpoint.problems(List.of("localhost:6379"))).singleElement().asString().contains("is not a Redis URI");
        assertThat(RedisEndpoint.problems(List.of("redis://u:s3cret@127.0.0.1:notaport"))).singleElement().asString()
                .contains("redis://***@127.0.0.1:notaport").contains("not host[:port]").doesNotContain("s3cret");
        assertThat(RedisEndpoint.problems(List.of("redis-sentinel://h:26379"))).singleElement().asString().contains("names no master");
        assertThat(RedisEndpoint.problems(List.of("redis-cluster://h:1/3"))).singleElement().asString()
                .contains("only database 0");
        assertThat(RedisEndpoint.problems(List.of("redis-cluster://h:1", "redis-sentinel://h2"))).singleElement().asString()
                .contains("mixes the schemes");
        assertThat(RedisEndpoint.problems(List.of("redis-cluster://a:pw@h:1", "b:pw@h2"))).singleElement().asString()
                .contains("different credentials").doesNotContain("pw");
        assertThat(RedisEndpoint.problems(List.of("redis://h1", "redis://h2"))).singleElement().asString()
                .contains("several Redis endpoints (2)");
        assertThat(RedisEndpoint.problems(List.of("memcached://h"))).singleElement().asString().contains("scheme 'memcached'");
        assertThatThrownBy(() -> RedisEndpoint.parse("redis://:s3cret@h:0")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("s3cret");
    }
}
