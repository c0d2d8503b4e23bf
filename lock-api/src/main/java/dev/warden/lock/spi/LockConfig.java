package dev.warden.lock.spi;

import dev.warden.lock.Redaction;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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

    /** A backend option, if set. */
    public Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }
}
