/**
 * Real servers for integration tests and demos, with fault controls, so tests exercise the network and
 * the server rather than a mock: {@link RedisServer}, {@link RedisSentinel}, {@link RedisCluster},
 * {@link EtcdServer}, {@link EtcdCluster}, {@link ZooKeeperServer}, {@link ZooKeeperEnsemble} and
 * {@link PostgresServer}, launched on free loopback ports, each with pause, kill and restart (a server
 * named by an environment variable is used as is, without fault controls). A test class usually
 * registers one through its JUnit extension, such as {@link RedisServerExtension}, which starts it once
 * per class and heals it before each test. {@link TcpProxy} cuts, freezes or slows one client's
 * traffic; {@link TlsMaterial} makes throwaway certificates; {@link CapturedOutput} lets a test prove
 * that no secret was printed. A server that cannot be found fails the test with a message saying what
 * to install; it is never skipped.
 */
package dev.warden.testkit;
