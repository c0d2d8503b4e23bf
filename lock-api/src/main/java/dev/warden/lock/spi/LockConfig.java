package dev.warden.lock.spi;

import dev.warden.lock.Redaction;
import dev.warden.lock.settings.SettingTable;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A configuration whose common settings lock-api has already parsed and validated.
 *
 * @param backend the backend name
 * @param endpoints endpoint URIs as written
 * @param namespace prefix of every key or path
 * @param ttl the lease time to live
 * @param connectTimeout how long connecting may take
 * @param requestTimeout the deadline of every server call
 * @param options backend options, keyed without the {@code warden.lock.<backend>.} prefix
 */
public record LockConfig(String backend, List<String> endpoints, String namespace, Duration ttl,
                         Duration connectTimeout, Duration requestTimeout, Map<String, String> options) {

    public LockConfig {
        endpoints = List.copyOf(endpoints);
        options = Map.copyOf(options);
    }

    /** The settings without secrets: endpoints redacted, secret options masked ({@link Redaction}). */
    @Override
    public String toString() {
        return "LockConfig[backend=" + backend + ", endpoints=" + Redaction.redact(String.valueOf(endpoints))
                + ", namespace=" + namespace + ", ttl=" + ttl + ", connectTimeout=" + connectTimeout
                + ", requestTimeout=" + requestTimeout + ", options=" + Redaction.settings(options) + "]";
    }

    /**
     * The backend's options read through its {@link SettingTable} (the one {@link LockProvider#settings()}
     * returns): typed values with their defaults, secrets resolved from {@code -file} and {@code -env}, and every
     * problem, each naming its full key. The options are kept without the {@code warden.lock.<backend>.}
     * prefix; this puts it back, so a backend need not.
     *
     * @param environment where {@code -env} secrets are looked up ({@code System::getenv} in production)
     */
    public SettingTable.Values read(SettingTable table, Function<String, String> environment) {
        Map<String, String> prefixed = new LinkedHashMap<>();
        options.forEach((k, v) -> prefixed.put("warden.lock." + backend + "." + k, v));
        return table.read(prefixed, environment);
    }

    /** A backend option, if set. */
    public Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }
}
