package dev.warden.quota.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaListener;
import dev.warden.quota.QuotaService;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.RedisConnector;
import dev.warden.quota.redis.RedisRefusal;
import dev.warden.quota.redis.ScriptRunner;
import dev.warden.redis.internal.RedisFailures;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Builds the service behind {@link QuotaService#create}: connects (two connections, the scripts
 * loaded, the lock client for charges) within the connect timeout, and translates what stops it.
 */
public final class QuotaFactory {

    private QuotaFactory() {
    }

    public static QuotaService create(Map<String, ?> settings) {
        return create(settings, new QuotaListener() {
        });
    }

    public static QuotaService create(Map<String, ?> settings, QuotaListener listener) {
        return create(settings, listener, Clock.systemUTC());
    }

    /** With the clock holds are timed by: the engine's clock seam, a virtual one in tests. */
    public static QuotaService create(Map<String, ?> settings, QuotaListener listener, Clock clock) {
        return open(QuotaConfig.from(Objects.requireNonNull(settings, "settings")),
                Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(clock, "clock"));
    }

    public static QuotaService create(Properties properties) {
        return open(QuotaConfig.from(Objects.requireNonNull(properties, "properties")), new QuotaListener() {
        }, Clock.systemUTC());
    }

    /**
     * A service over a connector the caller owns and closes: two connections of its client, closed with the
     * service; the client stays the caller's.
     *
     * @throws IllegalArgumentException when {@code config} names another Redis than the connector's
     */
    public static QuotaService over(RedisConnector connector, QuotaConfig config) {
        Objects.requireNonNull(connector, "connector");
        Objects.requireNonNull(config, "config");
        if (!config.endpoint().equals(connector.config().endpoint())) {
            throw new IllegalArgumentException("the settings name another Redis than the connector's");
        }
        return open(config, new QuotaListener() {
        }, Clock.systemUTC(), connector, false);
    }

    private static QuotaService open(QuotaConfig config, QuotaListener listener, Clock clock) {
        return open(config, listener, clock, RedisConnector.create(config), true);
    }

    private static QuotaService open(QuotaConfig config, QuotaListener listener, Clock clock, RedisConnector connector,
                                     boolean ownsConnector) {
        String endpoint = connector.endpoint();
        List<RedisConnection> made = new ArrayList<>();
        AccountLocks locks = null;
        try {
            long deadline = System.nanoTime() + config.connectTimeout().toNanos();
            RedisConnection connection = connector.connectAsync().get(left(deadline), TimeUnit.NANOSECONDS);
            made.add(connection);
            RedisConnection batch = connector.connectAsync().get(left(deadline), TimeUnit.NANOSECONDS);
            made.add(batch);
            batch.setAutoFlushCommands(false);
            connector.checkEvictionPolicy(connection);
            new ScriptRunner(connection, config.requestTimeout()).loadAll(Scripts.all()).get(left(deadline), TimeUnit.NANOSECONDS);
            locks = AccountLocks.create(config, listener);
            return new RedisQuotaService(config, connector, ownsConnector, connection, batch, locks, clock);
        } catch (InterruptedException e) {
            shutdown(connector, ownsConnector, made, locks);
            throw QuotaException.interrupted("interrupted while connecting to Redis at " + endpoint, e);
        } catch (TimeoutException e) {
            shutdown(connector, ownsConnector, made, locks);
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + " and load the"
                    + " scripts within " + config.connectTimeout().toMillis() + " ms", e);
        } catch (QuotaException e) {
            shutdown(connector, ownsConnector, made, locks);
            throw e;
        } catch (ExecutionException | RuntimeException e) {
            shutdown(connector, ownsConnector, made, locks);
            Throwable cause = RedisFailures.unwrap(e);
            if (cause instanceof QuotaException q) {
                throw q;
            }
            String refusal = RedisFailures.denial(cause);
            if (refusal != null) {
                throw RedisRefusal.accessDenied(endpoint, "the connection", refusal, cause);
            }
            String tls = RedisRefusal.tlsHint(cause);
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + (tls.isEmpty() ? " and load the scripts (Redis 7 or later is needed): " + cause.getMessage()
                    : ": " + cause.getMessage() + tls), cause);
        }
    }

    private static long left(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    /** Undoes a failed open: the lock client, and the connector when it is the service's own, else its connections. */
    private static void shutdown(RedisConnector connector, boolean ownsConnector, List<RedisConnection> made, AccountLocks locks) {
        if (locks != null) {
            locks.close();
        }
        if (ownsConnector) {
            connector.close();
        } else {
            made.forEach(connector::disconnect);
        }
    }
}
