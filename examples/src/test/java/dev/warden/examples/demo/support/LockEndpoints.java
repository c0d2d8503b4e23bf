package dev.warden.examples.demo.support;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Where a lock backend is: a flag, else the settings file's {@code warden.lock.endpoints} when its
 * scheme is the backend's, else an embedded server.
 */
public final class LockEndpoints {

    private LockEndpoints() {
    }

    /** The backends the examples know. */
    public static final String[] BACKENDS = {"redis", "etcd", "zookeeper"};

    /**
     * Completes {@code settings} for {@code backend}: sets {@code warden.lock.backend} and
     * {@code warden.lock.endpoints}, starting an embedded server through {@code servers} when
     * neither {@code flag} nor the file names one.
     *
     * @return the endpoints chosen
     */
    public static String resolve(Map<String, String> settings, String backend, String flag, Servers servers) {
        String fileEndpoints = settings.remove("warden.lock.endpoints");
        settings.put("warden.lock.backend", backend);
        String endpoints;
        if (flag != null) {
            endpoints = SettingsFile.withScheme(backend, flag);
        } else {
            endpoints = matching(fileEndpoints, backend).orElseGet(() -> switch (backend) {
                case "redis" -> servers.redis();
                case "etcd" -> servers.etcd();
                case "zookeeper" -> servers.zookeeper();
                case "jdbc" -> servers.postgres(settings);
                default -> throw new IllegalArgumentException("unknown backend " + backend);
            });
        }
        settings.put("warden.lock.endpoints", endpoints);
        return endpoints;
    }

    /** The backend named by {@code --lock}, else by the settings file, else {@code redis}. */
    public static String backend(String flag, Map<String, String> settings) {
        String b = flag != null ? flag : settings.getOrDefault("warden.lock.backend", "redis");
        return b.trim().toLowerCase(Locale.ROOT);
    }

    /** {@code endpoints} when they are {@code backend}'s (its TLS scheme too), else empty. */
    public static Optional<String> matching(String endpoints, String backend) {
        if (endpoints == null || endpoints.isBlank()) {
            return Optional.empty();
        }
        String t = endpoints.trim();
        if (t.startsWith(backend + "://") || (backend.equals("jdbc") && t.startsWith("jdbc:postgresql://")) || (backend.equals("redis") && t.startsWith("rediss://"))
                || (backend.equals("etcd") && t.startsWith("etcds://"))) {
            return Optional.of(t);
        }
        return Optional.empty();
    }
}
