package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.zookeeper.internal.Paths;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Two tenants on one ZooKeeper server, each a digest user whose nodes are creator-only (the default
 * with a user); tenant A's password comes from a file, tenant B's from an environment variable. The
 * server, not Warden, keeps them apart: B's raw client is refused (NoAuth) on A's nodes, B's Warden
 * client is refused A's namespace, and A's lock stays held throughout.
 */
class ZooKeeperTenantsTest {

    /** Set by this module's Surefire configuration. */
    static final String ENV = "WARDEN_TEST_TENANT_B_PASSWORD";
    static final String PASSWORD_A = "tenant-a-file-secret-83e1";
    static final String WRONG = "not-the-password-0a6f";
    static final String SUPER_PASSWORD = "testkit-super-77d0";

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().superUser(SUPER_PASSWORD));

    @TempDir
    static Path dir;
    static Path passwordFileA;
    static ZooKeeperInspector inspector;

    @BeforeAll
    static void tenants() throws Exception {
        assertThat(System.getenv(ENV)).as("%s is set by lock-zookeeper/pom.xml's Surefire configuration; run through Maven", ENV)
                .isNotBlank();
        passwordFileA = dir.resolve("tenant-a.password");
        Files.writeString(passwordFileA, PASSWORD_A + "\n");
        ZooKeeperInspector.warmUp(zookeeper.server().connectString());
        inspector = new ZooKeeperInspector(zookeeper.server().connectString(), SUPER_PASSWORD);
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    static Map<String, Object> tenantA(String namespace) {
        Map<String, Object> s = common(namespace);
        s.put("warden.lock.zookeeper.username", "tenant-a");
        s.put("warden.lock.zookeeper.password-file", passwordFileA.toString());
        return s;
    }

    static Map<String, Object> tenantB(String namespace) {
        Map<String, Object> s = common(namespace);
        s.put("warden.lock.zookeeper.username", "tenant-b");
        s.put("warden.lock.zookeeper.password-env", ENV);
        return s;
    }

    static Map<String, Object> common(String namespace) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", zookeeper.server().endpoint());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", "5s");
        s.put("warden.lock.request-timeout", "2s");
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        return s;
    }

    /** A raw Curator client of the server, authenticated as {@code user} (none when null). */
    static CuratorFramework raw(String user, String password) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(zookeeper.server().connectString())
                .sessionTimeoutMs(10_000).connectionTimeoutMs(5_000).retryPolicy(new RetryNTimes(3, 100));
        if (user != null) {
            b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = b.build();
        c.start();
        return c;
    }

    static void noAuth(String what, Executable call) {
        assertThrows(KeeperException.NoAuthException.class, call, what);
    }

    static LockException denied(Executable call) {
        AtomicCapture captured = new AtomicCapture();
        String logged = CapturedOutput.of(() -> captured.error = assertThrows(LockException.class, call));
        LockException e = captured.error;
        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
        assertThat(CapturedOutput.chain(e) + logged).doesNotContain(PASSWORD_A).doesNotContain(System.getenv(ENV))
                .doesNotContain(WRONG);
        return e;
    }

    static final class AtomicCapture {
        LockException error;
    }

    @Test
    @DisplayName("tenant B can neither read, write, delete nor queue under tenant A's lock, nor open A's namespace; A keeps it")
    void tenantsKeptApart() throws Exception {
        try (LockClient a = LockClient.create(tenantA("tenant-a")); LockClient b = LockClient.create(tenantB("tenant-b"))) {
            Lease held = a.lock("merchant-1").acquire();
            String lockPath = Paths.lockPath("tenant-a", "merchant-1");
            List<String> queue = inspector.queue("tenant-a", "merchant-1");
            assertThat(queue).hasSize(1);
            String holder = lockPath + "/" + queue.get(0);
            Stat before = inspector.holder("tenant-a", "merchant-1");

            // Every node Warden made for A is A's alone.
            List<ACL> onlyA = List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", ZooKeeperServer.digest("tenant-a", PASSWORD_A))));
            for (String path : List.of("/tenant-a", lockPath, holder)) {
                assertThat(inspector.curator().getACL().forPath(path)).as(path).isEqualTo(onlyA);
            }

            // B's own namespace works, under the same lock name.
            Lease own = b.lock("merchant-1").acquire();
            assertThat(own.release()).isEqualTo(ReleaseOutcome.RELEASED);

            // B's raw client (and an anonymous one) on A's nodes: the server refuses.
            for (CuratorFramework intruder : List.of(raw("tenant-b", System.getenv(ENV)), raw(null, null))) {
                try (intruder) {
                    noAuth("delete the holder", () -> intruder.delete().forPath(holder));
                    noAuth("overwrite the holder", () -> intruder.setData().forPath(holder, "stolen".getBytes(StandardCharsets.UTF_8)));
                    noAuth("read the holder", () -> intruder.getData().forPath(holder));
                    noAuth("queue under A's lock", () -> intruder.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath(lockPath + "/lock-"));
                    noAuth("list A's locks", () -> intruder.getChildren().forPath("/tenant-a"));
                    noAuth("delete A's lock node", () -> intruder.delete().forPath(lockPath));
                    noAuth("open A's ACL", () -> intruder.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(holder));
                }
            }

            // B through Warden, pointed at A's namespace: refused when the client opens, nothing left behind.
            LockException e = denied(() -> LockClient.create(tenantB("tenant-a")).close());
            assertThat(e.getMessage()).contains("/tenant-a").contains("tenant-b").contains(zookeeper.server().connectString());

            assertThat(inspector.queue("tenant-a", "merchant-1")).isEqualTo(queue);
            assertThat(inspector.holder("tenant-a", "merchant-1").getCzxid()).isEqualTo(before.getCzxid());
            assertThat(held.isValid()).isTrue();
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(a.toString() + b).doesNotContain(PASSWORD_A).doesNotContain(System.getenv(ENV));
        }
    }

    @Test
    @DisplayName("a wrong password is an identity A's ACLs refuse: ACCESS_DENIED, the secret nowhere, nothing held")
    void wrongPassword() throws Exception {
        try (LockClient a = LockClient.create(tenantA("tenant-w"))) {
            a.lock("x").acquire().release();
        }
        Map<String, Object> s = tenantA("tenant-w");
        s.remove("warden.lock.zookeeper.password-file");
        s.put("warden.lock.zookeeper.password", WRONG);
        LockException e = denied(() -> LockClient.create(s).close());
        assertThat(e.getMessage()).contains("/tenant-w").contains("password is wrong");
        assertThat(inspector.curator().getChildren().forPath("/tenant-w")).as("nothing held").allSatisfy(lock ->
                assertThat(inspector.queue("tenant-w", lock)).isEmpty());
    }

    @Test
    @DisplayName("in a namespace node anyone may write, another user's lock node still refuses B: ACCESS_DENIED on acquire")
    void sharedOpenNamespace() throws Exception {
        inspector.curator().create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/shared");
        try (LockClient a = LockClient.create(tenantA("shared"))) {
            Lease held = a.lock("merchant-2").acquire();
            Stat before = inspector.holder("shared", "merchant-2");
            try (LockClient b = LockClient.create(tenantB("shared"))) {
                LockException e = denied(() -> b.lock("merchant-2").tryAcquire(Duration.ofSeconds(1)));
                assertThat(e.getMessage()).contains(zookeeper.server().connectString()).contains("NoAuth");
                // B's own lock names in the shared node work.
                Optional<Lease> own = b.lock("merchant-3").tryAcquire(Duration.ofSeconds(5));
                assertThat(own).isPresent();
                assertThat(own.get().release()).isEqualTo(ReleaseOutcome.RELEASED);
            }
            assertThat(inspector.queue("shared", "merchant-2")).hasSize(1);
            assertThat(inspector.holder("shared", "merchant-2").getCzxid()).isEqualTo(before.getCzxid());
            assertThat(held.isValid()).isTrue();
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }
    }

    @Test
    @DisplayName("user, password and acl settings that cannot work are configuration errors, naming no secret")
    void settingsErrors() {
        Map<Map<String, Object>, String> cases = new java.util.LinkedHashMap<>();
        Map<String, Object> noPassword = common("x");
        noPassword.put("warden.lock.zookeeper.username", "tenant-a");
        cases.put(noPassword, "needs a password");
        Map<String, Object> noUser = common("x");
        noUser.put("warden.lock.zookeeper.password", PASSWORD_A);
        cases.put(noUser, "without warden.lock.zookeeper.username");
        Map<String, Object> creatorWithoutUser = common("x");
        creatorWithoutUser.put("warden.lock.zookeeper.acl", "creator");
        cases.put(creatorWithoutUser, "acl creator needs");
        Map<String, Object> badAcl = tenantA("x");
        badAcl.put("warden.lock.zookeeper.acl", "everyone");
        cases.put(badAcl, "must be creator, creator-read-world or open");
        Map<String, Object> twoWays = tenantA("x");
        twoWays.put("warden.lock.zookeeper.password", PASSWORD_A);
        cases.put(twoWays, "set only one");
        Map<String, Object> unset = tenantB("x");
        unset.put("warden.lock.zookeeper.password-env", "WARDEN_TEST_NO_SUCH_VARIABLE");
        cases.put(unset, "WARDEN_TEST_NO_SUCH_VARIABLE, which is not set");
        Map<String, Object> inEndpoint = common("x");
        inEndpoint.put("warden.lock.endpoints", "zookeeper://tenant-a:" + PASSWORD_A + "@" + zookeeper.server().connectString());
        cases.put(inEndpoint, "use warden.lock.zookeeper.username");
        cases.forEach((settings, message) -> assertThatThrownBy(() -> LockClient.create(settings).close())
                .as(message).isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining(message).hasMessageNotContaining(PASSWORD_A));
    }
}
