package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Workload;
import dev.warden.benchmarks.scenarios.Accounts;
import dev.warden.benchmarks.scenarios.BareRedisScripts;
import dev.warden.benchmarks.scenarios.CuratorMutex;
import dev.warden.benchmarks.scenarios.JetcdLockRpc;
import dev.warden.benchmarks.scenarios.LockContention;
import dev.warden.benchmarks.scenarios.LuaDeduct;
import dev.warden.benchmarks.scenarios.PostgresDeduct;
import dev.warden.benchmarks.scenarios.CuratorRecipe;
import dev.warden.benchmarks.scenarios.RedissonLock;
import dev.warden.benchmarks.scenarios.RedissonRecipe;
import dev.warden.benchmarks.scenarios.WardenRecipe;
import dev.warden.benchmarks.scenarios.SeedAlternatives;
import dev.warden.benchmarks.scenarios.ShedLockJdbc;
import dev.warden.benchmarks.scenarios.SpringJdbcLockRegistry;
import dev.warden.benchmarks.scenarios.WardenLock;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The rows of the one benchmark table, Warden's and its baselines', on the servers they run against: what
 * {@code Bench} measures, and what {@code EveryRowRunsTest} runs briefly so a row that errors fails the
 * build rather than a later benchmark run.
 */
public final class Rows {

    /** The servers the rows run on. */
    public record Servers(RedisServer redis, EtcdServer etcd, ZooKeeperServer zookeeper, PostgresServer postgres) {

        /** Each lock backend's settings. */
        public Map<String, Map<String, Object>> lockBackends() {
            Map<String, Map<String, Object>> backends = new LinkedHashMap<>();
            backends.put("redis", Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.uri()));
            backends.put("etcd", Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints(),
                    "warden.lock.ttl", "10s"));
            backends.put("zookeeper", Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints",
                    zookeeper.endpoint(), "warden.lock.ttl", "10s"));
            // The middle step of a rolling switch from Redis to etcd: both locks, Redis first.
            backends.put("redis-to-etcd", Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints(),
                    "warden.lock.ttl", "10s", "warden.lock.migrate-from", "redis", "warden.lock.migrate-from-endpoints",
                    redis.uri()));
            return backends;
        }

        Map<String, Object> lock(String backend, String namespace) {
            Map<String, Object> s = new LinkedHashMap<>(lockBackends().get(backend));
            s.put("warden.lock.namespace", namespace);
            return s;
        }

        /**
         * Warden's jdbc backend on the PostgreSQL server: the login in its own setting (the backend refuses
         * one in the URL), the pool at its default size (8). Kept out of {@link #lockBackends()}, whose every
         * backend also gets a quota row.
         */
        Map<String, Object> jdbcLock(String namespace) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("warden.lock.backend", "jdbc");
            s.put("warden.lock.endpoints", "jdbc:postgresql://" + postgres.host() + ":" + postgres.port() + "/"
                    + postgres.database());
            s.put("warden.lock.jdbc.username", postgres.user());
            s.put("warden.lock.namespace", namespace);
            return s;
        }
    }

    private Rows() {
    }

    /** The lock rows, uncontended then contended: Warden on each backend beside that backend's own client. */
    public static List<Supplier<Workload>> locks(Servers s) {
        List<Supplier<Workload>> rows = new ArrayList<>();
        for (boolean contended : new boolean[] {false, true}) {
            rows.add(() -> new WardenLock("warden redis", s.lock("redis", "bench"), contended));
            rows.add(() -> new RedissonLock(s.redis().uri(), contended, "redisson"));
            if (!contended) {
                rows.add(() -> new BareRedisScripts(s.redis().uri(), "bare"));
            }
            rows.add(() -> new WardenLock("warden etcd", s.lock("etcd", "bench"), contended));
            rows.add(() -> new WardenLock("warden redis→etcd migrating", s.lock("redis-to-etcd", "bench"), contended));
            rows.add(() -> new JetcdLockRpc(s.etcd().clientUrls(), contended, "jetcd-bench"));
            rows.add(() -> new WardenLock("warden zookeeper", s.lock("zookeeper", "bench"), contended));
            rows.add(() -> new CuratorMutex(s.zookeeper().connectString(), contended, "curator-bench"));
        }
        // Lease caching: the same client keeps what it releases. Its cost to a contender in another process shows
        // with a client per thread, beside the same row without caching.
        Map<String, Object> kept = new LinkedHashMap<>(s.lock("redis", "bench"));
        kept.put("warden.lock.lease-cache", "1s");
        for (LockContention contention : LockContention.values()) {
            rows.add(() -> new WardenLock("warden redis, leases kept", kept, contention));
        }
        rows.add(() -> new WardenLock("warden redis", s.lock("redis", "bench"), LockContention.CONTENDED_CLIENT_PER_THREAD));
        // The same on etcd and ZooKeeper, whose kept holds reserve their tokens at the first release.
        for (String backend : List.of("etcd", "zookeeper")) {
            Map<String, Object> keptHere = new LinkedHashMap<>(s.lock(backend, "bench-kept"));
            keptHere.put("warden.lock.lease-cache", "1s");
            for (LockContention contention : LockContention.values()) {
                rows.add(() -> new WardenLock("warden " + backend + ", leases kept", keptHere, contention));
            }
            rows.add(() -> new WardenLock("warden " + backend, s.lock(backend, "bench"), LockContention.CONTENDED_CLIENT_PER_THREAD));
        }
        // PostgreSQL: Warden's jdbc backend beside ShedLock's and Spring Integration's JDBC locks, also with a
        // client per thread, where the contenders meet only in the database (as separate processes would).
        Map<String, Object> jdbcKept = new LinkedHashMap<>(s.jdbcLock("bench-kept"));
        jdbcKept.put("warden.lock.lease-cache", "1s");
        for (LockContention contention : LockContention.values()) {
            rows.add(() -> new WardenLock("warden jdbc", s.jdbcLock("bench"), contention));
            rows.add(() -> new WardenLock("warden jdbc, leases kept", jdbcKept, contention));
            rows.add(() -> new ShedLockJdbc(s.postgres().jdbcUrl(), contention));
            rows.add(() -> new SpringJdbcLockRegistry(s.postgres().jdbcUrl(), contention));
        }
        return rows;
    }

    /** The recipe rows: a semaphore and a read-write lock on each backend beside Redisson's and Curator's. */
    public static List<Supplier<Workload>> recipes(Servers s) {
        List<Supplier<Workload>> rows = new ArrayList<>();
        for (WardenRecipe.Recipe recipe : WardenRecipe.Recipe.values()) {
            rows.add(() -> new WardenRecipe("warden redis", s.lock("redis", "bench"), recipe));
            rows.add(() -> new RedissonRecipe(s.redis().uri(), recipe, "redisson"));
            rows.add(() -> new WardenRecipe("warden etcd", s.lock("etcd", "bench"), recipe));
            rows.add(() -> new WardenRecipe("warden zookeeper", s.lock("zookeeper", "bench"), recipe));
            rows.add(() -> new CuratorRecipe(s.zookeeper().connectString(), recipe, "curator-bench"));
        }
        return rows;
    }

    /** The quota rows, per account mix: Warden's deduction (bare, batched, split, under each lock) beside the alternatives. */
    public static List<Supplier<Workload>> quota(Servers s) {
        List<Supplier<Workload>> rows = new ArrayList<>();
        for (Accounts accounts : Accounts.values()) {
            Map<String, Object> quota = Map.of("warden.quota.endpoint", s.redis().uri());
            rows.add(() -> new LuaDeduct("warden lua, sync", quota, accounts, LuaDeduct.Mode.SYNC));
            rows.add(() -> new LuaDeduct("warden lua, async", quota, accounts, LuaDeduct.Mode.ASYNC));
            if (accounts == Accounts.HOT) {
                rows.add(() -> new LuaDeduct("warden lua, sync, 8 buckets", quota, accounts, LuaDeduct.Mode.SYNC, 8));
            }
            for (String backend : s.lockBackends().keySet()) {
                Map<String, Object> locked = new LinkedHashMap<>(quota);
                locked.putAll(s.lock(backend, "bench-quota"));
                // The migrating step's lock is the backend moved to's, taken after the one left.
                locked.put("warden.quota.lock", locked.get("warden.lock.backend"));
                rows.add(() -> new LuaDeduct("warden " + backend + " lock + lua", locked, accounts, LuaDeduct.Mode.LOCKED));
                if (backend.equals("redis")) {
                    Map<String, Object> kept = new LinkedHashMap<>(locked);
                    kept.put("warden.lock.lease-cache", "1s");
                    rows.add(() -> new LuaDeduct("warden redis lock, leases kept + lua", kept, accounts, LuaDeduct.Mode.LOCKED));
                }
                if (backend.equals("redis") || backend.equals("etcd")) {
                    // One hold for the charges waiting in the engine, priced in rounds (warden.quota.combine-charges).
                    Map<String, Object> combined = new LinkedHashMap<>(locked);
                    combined.put("warden.quota.combine-charges", "true");
                    rows.add(() -> new LuaDeduct("warden " + backend + " lock, charges combined + lua", combined, accounts,
                            LuaDeduct.Mode.LOCKED));
                    if (backend.equals("redis")) {
                        rows.add(() -> new LuaDeduct("warden redis lock, charges combined, async + lua", combined, accounts,
                                LuaDeduct.Mode.LOCKED_ASYNC));
                    }
                }
            }
            for (SeedAlternatives.Style style : SeedAlternatives.Style.values()) {
                rows.add(() -> new SeedAlternatives(s.redis().uri(), accounts, style));
            }
            rows.add(() -> new PostgresDeduct(s.postgres().jdbcUrl(), accounts, PostgresDeduct.Style.SELECT_FOR_UPDATE));
            rows.add(() -> new PostgresDeduct(s.postgres().jdbcUrl(), accounts, PostgresDeduct.Style.CONDITIONAL_UPDATE));
        }
        return rows;
    }
}
