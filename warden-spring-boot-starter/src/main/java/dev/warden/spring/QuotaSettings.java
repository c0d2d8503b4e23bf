package dev.warden.spring;

import java.util.Map;

/**
 * The settings the auto-configured {@code QuotaService} was created from ({@code warden.quota.*} and
 * {@code warden.lock.*}, as Warden spells them), for the parts of Warden that connect to the same Redis
 * on their own: {@code LedgerConsumer.builder(settings.asMap(), dataSource)}, {@code Reconciler}.
 *
 * @param asMap the settings; values are strings
 */
public record QuotaSettings(Map<String, Object> asMap) {

    public QuotaSettings {
        asMap = Map.copyOf(asMap);
    }

    @Override
    public String toString() {
        // Endpoints may carry passwords: never print the map.
        return "QuotaSettings[" + asMap.size() + " settings]";
    }
}
