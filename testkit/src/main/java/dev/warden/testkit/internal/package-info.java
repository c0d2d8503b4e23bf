/**
 * How testkit launches servers and reads them: child processes and their signals
 * ({@code ServerProcess}, {@link RedisProcess}, {@link EtcdProcess}, {@link ZooKeeperProcess},
 * {@link PostgresProcess}), servers someone else runs ({@link ExternalRedis}, {@link PostgresExternal})
 * or a Docker container ({@link RedisContainer}), finding binaries and free ports, and minimal clients
 * of its own ({@link RespConnection}, {@link EtcdHttp}, {@link PostgresClient},
 * {@link FourLetterWords}), so that assertions never go through the client under test. Internal to
 * Warden: no compatibility promise.
 */
package dev.warden.testkit.internal;
