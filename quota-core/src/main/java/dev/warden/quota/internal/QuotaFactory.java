package dev.warden.quota.internal;

import dev.warden.quota.QuotaListener;
import dev.warden.quota.QuotaService;
import dev.warden.quota.spi.QuotaConfig;

import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/** Builds the service behind {@link QuotaService#create}. */
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
        return RedisQuotaService.open(QuotaConfig.from(Objects.requireNonNull(settings, "settings")),
                Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(clock, "clock"));
    }

    public static QuotaService create(Properties properties) {
        return RedisQuotaService.open(QuotaConfig.from(Objects.requireNonNull(properties, "properties")), new QuotaListener() {
        }, Clock.systemUTC());
    }
}
