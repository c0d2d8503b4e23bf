/**
 * The workloads, one class per implementation: Warden's lock on any backend ({@link WardenLock}) and
 * its quota engine ({@link LuaDeduct}), beside what users would pick instead: Redisson
 * ({@link RedissonLock}), jetcd's Lock RPC ({@link JetcdLockRpc}), Curator ({@link CuratorMutex}),
 * ShedLock's and Spring Integration's JDBC locks beside Warden's jdbc backend ({@link ShedLockJdbc},
 * {@link SpringJdbcLockRegistry}), PostgreSQL ({@link PostgresDeduct}) and read-then-write deductions on plain Redis
 * ({@link SeedAlternatives}); {@link BareRedisScripts} sends Warden's two lock scripts bare, as the
 * limit. Contended lock workloads prove that no two threads are inside at once
 * ({@code CriticalSection}), so a baseline used wrongly fails instead of posting a fast figure.
 */
package dev.warden.benchmarks.scenarios;
