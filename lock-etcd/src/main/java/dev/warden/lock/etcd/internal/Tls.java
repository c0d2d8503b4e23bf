package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.WardenSettings;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * TLS settings for {@code etcds://} endpoints: {@code warden.lock.etcd.tls.trust-store} (a PKCS12
 * or JKS file of the CAs to trust; the JVM's default trust when unset) and, for a client
 * certificate ({@code --client-cert-auth}), {@code tls.key-store} (the client's key and certificate
 * chain); each store's password inline, in a file or in an environment variable
 * ({@code tls.trust-store-password[-file|-env]}, {@code tls.key-store-password[-file|-env]}). The
 * server's certificate chain and its host name or IP address are always verified (gRPC's TLS
 * negotiation checks the endpoint's host, as HTTPS does).
 */
record Tls(Optional<Path> trustStore, Optional<String> trustStorePassword, Optional<Path> keyStore,
           Optional<String> keyStorePassword) {

    static final Set<String> OPTIONS = Set.of("tls.trust-store", "tls.trust-store-password", "tls.trust-store-password-file",
            "tls.trust-store-password-env", "tls.key-store", "tls.key-store-password", "tls.key-store-password-file",
            "tls.key-store-password-env");
    private static final String PREFIX = Credentials.PREFIX;

    static Tls of(Map<String, String> options, Function<String, String> environment) {
        Map<String, String> prefixed = new HashMap<>();
        options.forEach((k, v) -> prefixed.put(PREFIX + k, v));
        return new Tls(Optional.ofNullable(options.get("tls.trust-store")).map(String::trim).filter(s -> !s.isEmpty()).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.trust-store-password", environment),
                Optional.ofNullable(options.get("tls.key-store")).map(String::trim).filter(s -> !s.isEmpty()).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.key-store-password", environment));
    }

    static List<String> problems(List<String> endpoints, Map<String, String> options, Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        try {
            Tls tls = of(options, environment);
            boolean any = options.keySet().stream().anyMatch(OPTIONS::contains);
            if (any && !endpoints.isEmpty() && !Endpoints.tls(endpoints)) {
                problems.add(PREFIX + "tls.* is set but the endpoints are not etcds:// (TLS): use etcds://host:port,"
                        + " or remove the tls.* settings for plain-text etcd://");
            }
            tls.trustStore.filter(p -> !Files.isReadable(p))
                    .ifPresent(p -> problems.add(PREFIX + "tls.trust-store '" + p + "' is not a readable file"));
            tls.keyStore.filter(p -> !Files.isReadable(p))
                    .ifPresent(p -> problems.add(PREFIX + "tls.key-store '" + p + "' is not a readable file"));
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        return problems;
    }

    /**
     * gRPC's client TLS context for these settings: trust from the trust store (else the JVM's), the
     * client certificate from the key store when set.
     *
     * @throws LockException {@code CONFIGURATION} when a store cannot be read (wrong password, not a key store)
     */
    SslContext sslContext() {
        try {
            SslContextBuilder b = GrpcSslContexts.forClient();
            if (trustStore.isPresent()) {
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(load("tls.trust-store", trustStore.get(), trustStorePassword));
                b.trustManager(tmf);
            }
            if (keyStore.isPresent()) {
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(load("tls.key-store", keyStore.get(), keyStorePassword),
                        keyStorePassword.map(String::toCharArray).orElse(new char[0]));
                b.keyManager(kmf);
            }
            return b.build();
        } catch (GeneralSecurityException | IOException e) {
            throw new LockException(LockException.Reason.CONFIGURATION, "cannot set up TLS for etcd from " + this + ": "
                    + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String setting, Path path, Optional<String> password) {
        try {
            return KeyStore.getInstance(path.toFile(), password.map(String::toCharArray).orElse(null));
        } catch (GeneralSecurityException | IOException e) {
            throw new LockException(LockException.Reason.CONFIGURATION, PREFIX + setting + " '" + path
                    + "' cannot be read (wrong password, or not a PKCS12/JKS store): " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "Tls[trustStore=" + trustStore.map(Path::toString).orElse("-") + ", keyStore="
                + keyStore.map(Path::toString).orElse("-") + "]";
    }
}
