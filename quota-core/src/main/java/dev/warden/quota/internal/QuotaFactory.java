package dev.warden.quota.internal;

import dev.warden.quota.QuotaService;
import dev.warden.quota.spi.QuotaConfig;

import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/** Builds the service behind {@link QuotaService#create}. */
public final class QuotaFactory {

    private QuotaFactory() {
    }

    public static QuotaService create(Map<String, ?> settings) {
        return RedisQuotaService.open(QuotaConfig.from(Objects.requireNonNull(settings, "settings")));
    }

    public static QuotaService create(Properties properties) {
        return RedisQuotaService.open(QuotaConfig.from(Objects.requireNonNull(properties, "properties")));
    }
}
