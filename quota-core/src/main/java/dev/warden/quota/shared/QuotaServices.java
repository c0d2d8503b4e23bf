package dev.warden.quota.shared;

import dev.warden.quota.QuotaService;
import dev.warden.quota.internal.QuotaFactory;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnector;

/**
 * Quota services over a Redis client someone else owns, for Warden's modules that already hold a
 * {@link RedisConnector} to the same Redis (the ledger's consumer and reconciler compensate and
 * bootstrap through one): a process then keeps one client, one set of event loops, per Redis.
 *
 * <p>Applications use {@link QuotaService#create}, which opens and closes a client of its own.
 */
public final class QuotaServices {

    private QuotaServices() {
    }

    /**
     * A service on two new connections of {@code connector}'s client, loading the scripts there. Closing
     * the service closes those two connections and its lock client, never the connector.
     *
     * @param config the engine's settings; they must name the connector's Redis
     * @throws IllegalArgumentException when {@code config} names another Redis than the connector's
     * @throws dev.warden.quota.QuotaException as {@link QuotaService#create} does when connecting or loading fails
     */
    public static QuotaService over(RedisConnector connector, QuotaConfig config) {
        return QuotaFactory.over(connector, config);
    }
}
