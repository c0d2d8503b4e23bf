package dev.warden.lock.settings;

import java.util.List;

/**
 * The login and TLS settings every server-backed area declares alike under its own prefix
 * ({@code warden.lock.redis.}, {@code warden.lock.etcd.}, {@code warden.quota.redis.}, ...): declared here
 * once, so their names and meanings cannot differ between areas.
 */
public final class AccessSettings {

    private AccessSettings() {
    }

    /** {@code <prefix>username} and the secret {@code <prefix>password} ({@code -file}, {@code -env}). */
    public static List<Setting<?>> login(String prefix, String whose) {
        return List.of(
                Setting.text(prefix + "username", null, whose + " user (needs the password)"),
                Setting.secret(prefix + "password", whose + " password: inline, in a file (`-file`, one trailing line"
                        + " break dropped) or in the named environment variable (`-env`); one of the three"));
    }

    /** The trust store and, for mutual TLS, the key store, each with its secret password. */
    public static List<Setting<?>> tls(String prefix) {
        return List.of(
                Setting.text(prefix + "tls.trust-store", null, "PKCS12 (or JKS) file of the CAs to trust; the JVM's"
                        + " default trust when unset"),
                Setting.secret(prefix + "tls.trust-store-password", "the trust store's password"),
                Setting.text(prefix + "tls.key-store", null, "the client's key and certificate chain, for mutual TLS"),
                Setting.secret(prefix + "tls.key-store-password", "the key store's password"));
    }
}
