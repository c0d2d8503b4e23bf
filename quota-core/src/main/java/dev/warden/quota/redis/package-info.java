/**
 * What the quota engine shares with the ledger (quota-ledger), which reaches the same Redis on its own:
 * the settings ({@link QuotaConfig}); the one place Redis connections are built, on one server,
 * Sentinel or Cluster ({@link RedisConnector}, {@link RedisConnection}; the endpoint and the login are
 * read by warden-redis); running scripts after the shared prelude ({@link ScriptPrelude}) by digest ({@link ScriptRunner}); where
 * an account's keys live ({@link KeyLayout}); the rules for ids ({@link Ids}); and refused credentials
 * ({@link RedisRefusal}). These types serve Warden's own modules and are not an extension point:
 * applications use {@link dev.warden.quota.QuotaService}.
 */
package dev.warden.quota.redis;
