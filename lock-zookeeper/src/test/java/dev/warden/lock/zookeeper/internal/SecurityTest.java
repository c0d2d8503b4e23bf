package dev.warden.lock.zookeeper.internal;

import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** How the security settings become a digest identity, node ACLs and this client's own TLS configuration. */
class SecurityTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("the digest identity is ZooKeeper's own: user:base64(sha1(user:password))")
    void digest() throws Exception {
        assertThat(Security.digest("tenant-a", "pw:with:colons"))
                .isEqualTo(DigestAuthenticationProvider.generateDigest("tenant-a:pw:with:colons"));
    }

    @Test
    @DisplayName("a user means creator-only nodes by default; no user means open nodes; the acl setting picks")
    void acls() {
        assertThat(Security.of(Map.of(), k -> null).acl()).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        Map<String, String> user = Map.of("username", "u", "password", "p");
        assertThat(Security.of(user, k -> null).acl()).isEqualTo(ZooDefs.Ids.CREATOR_ALL_ACL);
        Map<String, String> readable = new HashMap<>(user);
        readable.put("acl", "creator-read-world");
        assertThat(Security.of(readable, k -> null).acl()).containsExactlyElementsOf(
                java.util.List.of(ZooDefs.Ids.CREATOR_ALL_ACL.get(0), ZooDefs.Ids.READ_ACL_UNSAFE.get(0)));
        readable.put("acl", "open");
        assertThat(Security.of(readable, k -> null).protectsNodes()).isFalse();
        assertThat(Security.problems(Map.of("acl", "creator"), k -> null)).anySatisfy(p -> assertThat(p).contains("needs"));
    }

    @Test
    @DisplayName("TLS settings go to this client's ZKClientConfig (Netty, stores, host name verification), never to system properties")
    void tlsConfig() throws Exception {
        Path trust = Files.writeString(dir.resolve("trust.p12"), "x");
        Path key = Files.writeString(dir.resolve("key.jks"), "x");
        Map<String, String> options = Map.of("tls.trust-store", trust.toString(), "tls.trust-store-password", "tpw",
                "tls.key-store", key.toString(), "tls.key-store-password-env", "KEY_PW");
        Security security = Security.of(options, name -> name.equals("KEY_PW") ? "kpw" : null);
        ZKClientConfig config = new ZKClientConfig();
        security.applyTo(CuratorFrameworkFactory.builder(), config);
        assertThat(config.getProperty(ZKClientConfig.SECURE_CLIENT)).isEqualTo("true");
        assertThat(config.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET)).isEqualTo("org.apache.zookeeper.ClientCnxnSocketNetty");
        assertThat(config.getProperty("zookeeper.ssl.hostnameVerification")).isEqualTo("true");
        assertThat(config.getProperty("zookeeper.ssl.trustStore.location")).isEqualTo(trust.toString());
        assertThat(config.getProperty("zookeeper.ssl.trustStore.password")).isEqualTo("tpw");
        assertThat(config.getProperty("zookeeper.ssl.trustStore.type")).isEqualTo("PKCS12");
        assertThat(config.getProperty("zookeeper.ssl.keyStore.location")).isEqualTo(key.toString());
        assertThat(config.getProperty("zookeeper.ssl.keyStore.password")).isEqualTo("kpw");
        assertThat(config.getProperty("zookeeper.ssl.keyStore.type")).isEqualTo("JKS");
        assertThat(System.getProperty(ZKClientConfig.SECURE_CLIENT)).isNull();
        assertThat(System.getProperty("zookeeper.ssl.trustStore.location")).isNull();
        assertThat(security.toString()).doesNotContain("tpw").doesNotContain("kpw");

        assertThat(Security.missingNetty()).as("lock-zookeeper brings what ZooKeeper's Netty client links").isEmpty();
        assertThat(Security.problems(options, name -> "kpw")).isEmpty();
        ZKClientConfig plain = new ZKClientConfig();
        Security.of(Map.of(), k -> null).applyTo(CuratorFrameworkFactory.builder(), plain);
        assertThat(plain.getProperty(ZKClientConfig.SECURE_CLIENT)).isNull();
    }
}
