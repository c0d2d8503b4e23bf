package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The ZooKeeper backend's security settings, all under {@code warden.lock.zookeeper.}:
 * <ul>
 *   <li>{@code username} and one of {@code password}, {@code password-file}, {@code password-env}: a
 *       digest identity, sent with Curator's {@code authorization("digest", user:password)} on every
 *       connection (ZooKeeper never refuses it at connect: a wrong password is an identity that ACLs
 *       refuse, {@code NoAuth});</li>
 *   <li>{@code acl}: the ACL of every node Warden creates — {@code creator} (default with a user: only
 *       that digest user, {@code CREATOR_ALL_ACL}), {@code creator-read-world} (that user, and anyone may
 *       read) or {@code open} (anyone may do anything, ZooKeeper's {@code OPEN_ACL_UNSAFE}; the default,
 *       and the only choice, without a user);</li>
 *   <li>{@code tls.trust-store} (+ {@code tls.trust-store-password[-file|-env]}) and, for client
 *       certificates, {@code tls.key-store} (+ {@code tls.key-store-password[-file|-env]}): TLS to the
 *       servers' secure client port, on this client's own {@link ZKClientConfig} (never JVM system
 *       properties), with ZooKeeper's Netty client and host name verification on.</li>
 * </ul>
 * Never printed: {@link #toString()} shows neither the password nor the store passwords.
 */
public final class Security {

    public static final Set<String> OPTIONS = Set.of("username", "password", "password-file", "password-env", "acl",
            "tls.trust-store", "tls.trust-store-password", "tls.trust-store-password-file", "tls.trust-store-password-env",
            "tls.key-store", "tls.key-store-password", "tls.key-store-password-file", "tls.key-store-password-env");
    static final String PREFIX = "warden.lock.zookeeper.";
    /** ZooKeeper's TLS client; it links Netty's epoll classes even where it runs on NIO. */
    static final String NETTY_CLIENT = "org.apache.zookeeper.ClientCnxnSocketNetty";
    private static final List<String> NETTY_CLASSES = List.of("io.netty.handler.ssl.SslContext", "io.netty.channel.epoll.Epoll");

    /** Who may do what with the nodes Warden creates. */
    enum Acl {
        CREATOR(ZooDefs.Ids.CREATOR_ALL_ACL),
        CREATOR_READ_WORLD(List.of(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.AUTH_IDS),
                new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE))),
        OPEN(ZooDefs.Ids.OPEN_ACL_UNSAFE);

        final List<ACL> acl;

        Acl(List<ACL> acl) {
            // Not List.copyOf: ZooKeeper asks the list whether it contains null, which List.copyOf's lists refuse.
            this.acl = java.util.Collections.unmodifiableList(new ArrayList<>(acl));
        }

        static Acl parse(String value) {
            return Acl.valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        }

        String settingValue() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Optional<String> username;
    private final Optional<String> password;
    private final Acl acl;
    private final Optional<Path> trustStore;
    private final Optional<String> trustStorePassword;
    private final Optional<Path> keyStore;
    private final Optional<String> keyStorePassword;

    private Security(Optional<String> username, Optional<String> password, Acl acl, Optional<Path> trustStore,
                     Optional<String> trustStorePassword, Optional<Path> keyStore, Optional<String> keyStorePassword) {
        this.username = username;
        this.password = password;
        this.acl = acl;
        this.trustStore = trustStore;
        this.trustStorePassword = trustStorePassword;
        this.keyStore = keyStore;
        this.keyStorePassword = keyStorePassword;
    }

    /**
     * The settings the options give.
     *
     * @throws IllegalArgumentException naming the setting, never a secret
     */
    static Security of(Map<String, String> options, Function<String, String> environment) {
        Map<String, String> prefixed = new HashMap<>();
        options.forEach((k, v) -> prefixed.put(PREFIX + k, v));
        Optional<String> username = Optional.ofNullable(options.get("username")).map(String::trim).filter(u -> !u.isEmpty());
        Optional<String> password = WardenSettings.secret(prefixed, PREFIX + "password", environment);
        Acl acl;
        String aclSetting = options.get("acl");
        if (aclSetting == null) {
            acl = username.isPresent() ? Acl.CREATOR : Acl.OPEN;
        } else {
            try {
                acl = Acl.parse(aclSetting);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(PREFIX + "acl '" + Redaction.redact(aclSetting)
                        + "' must be creator, creator-read-world or open");
            }
        }
        return new Security(username, password, acl,
                Optional.ofNullable(options.get("tls.trust-store")).map(String::trim).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.trust-store-password", environment),
                Optional.ofNullable(options.get("tls.key-store")).map(String::trim).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.key-store-password", environment));
    }

    /** Every problem with the security settings; empty when they are usable. */
    public static List<String> problems(Map<String, String> options, Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        Security s;
        try {
            s = of(options, environment);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
            return problems;
        }
        if (s.username.isPresent() && s.password.isEmpty()) {
            problems.add(PREFIX + "username needs a password (" + PREFIX + "password, password-file or password-env)");
        }
        if (s.username.isEmpty() && s.password.isPresent()) {
            problems.add(PREFIX + "password is set without " + PREFIX + "username (a digest identity is user:password)");
        }
        s.username.filter(u -> u.indexOf(':') >= 0)
                .ifPresent(u -> problems.add(PREFIX + "username must not contain ':' (ZooKeeper's digest is user:password)"));
        if (s.username.isEmpty() && s.acl != Acl.OPEN) {
            problems.add(PREFIX + "acl " + s.acl.settingValue() + " needs " + PREFIX + "username: the creator is a digest user");
        }
        if (s.keyStore.isPresent() && s.trustStore.isEmpty()) {
            problems.add(PREFIX + "tls.key-store is set without " + PREFIX + "tls.trust-store (the CAs to trust the servers by)");
        }
        s.trustStore.filter(p -> !Files.isReadable(p))
                .ifPresent(p -> problems.add(PREFIX + "tls.trust-store '" + p + "' is not a readable file"));
        s.keyStore.filter(p -> !Files.isReadable(p))
                .ifPresent(p -> problems.add(PREFIX + "tls.key-store '" + p + "' is not a readable file"));
        if (s.tls()) {
            missingNetty().ifPresent(problems::add);
        }
        return problems;
    }

    /**
     * ZooKeeper's TLS client runs on Netty and, even on NIO, links Netty's epoll classes. lock-zookeeper
     * declares both artifacts (at Warden's Netty, not ZooKeeper's 4.1, which breaks Lettuce and gRPC); a
     * build that excluded them would otherwise fail later, in a ZooKeeper thread, as a connect timeout.
     */
    static Optional<String> missingNetty() {
        List<String> missing = new ArrayList<>();
        for (String type : NETTY_CLASSES) {
            try {
                Class.forName(type, false, Security.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                missing.add(type);
            }
        }
        return missing.isEmpty() ? Optional.empty() : Optional.of(PREFIX + "tls.* needs ZooKeeper's Netty client, which links "
                + String.join(" and ", missing) + ", missing from the class path: lock-zookeeper declares io.netty:netty-handler"
                + " and io.netty:netty-transport-classes-epoll; if your build excludes them, add them back at the netty-bom"
                + " version Warden uses");
    }

    boolean tls() {
        return trustStore.isPresent();
    }

    boolean authenticated() {
        return username.isPresent();
    }

    /** Whether nodes are protected at all (anything but {@code open}). */
    boolean protectsNodes() {
        return acl != Acl.OPEN;
    }

    List<ACL> acl() {
        return acl.acl;
    }

    /** The {@code acl} setting in effect: {@code creator}, {@code creator-read-world} or {@code open}. */
    String aclSetting() {
        return acl.settingValue();
    }

    /** The digest identity ZooKeeper gives this client, {@code user:base64(sha1(user:password))}, as in ACLs. */
    Optional<String> digestId() {
        return username.map(u -> digest(u, password.orElseThrow()));
    }

    /** ZooKeeper's {@code DigestAuthenticationProvider.generateDigest}: {@code user:base64(sha1(user:password))}. */
    static String digest(String user, String password) {
        try {
            byte[] sha1 = MessageDigest.getInstance("SHA1").digest((user + ":" + password).getBytes(StandardCharsets.UTF_8));
            return user + ":" + Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA1 in this JVM", e);
        }
    }

    /** Sets the digest identity and the node ACLs on Curator's builder, and TLS on the client's own config. */
    void applyTo(CuratorFrameworkFactory.Builder builder, ZKClientConfig config) {
        username.ifPresent(u -> {
            byte[] auth = (u + ":" + password.orElseThrow()).getBytes(StandardCharsets.UTF_8);
            if (tls()) {
                // ZooKeeper's Netty client would send it with the ConnectRequest: see AuthAfterConnect.
                builder.zookeeperFactory(new AuthAfterConnect("digest", auth, config));
            } else {
                builder.authorization("digest", auth);
            }
        });
        List<ACL> nodes = acl.acl;
        builder.aclProvider(new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return nodes;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return nodes;
            }
        });
        if (!tls()) {
            return;
        }
        config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, NETTY_CLIENT);
        config.setProperty("zookeeper.ssl.hostnameVerification", "true");
        trustStore.ifPresent(p -> {
            config.setProperty("zookeeper.ssl.trustStore.location", p.toString());
            config.setProperty("zookeeper.ssl.trustStore.type", storeType(p));
            trustStorePassword.ifPresent(pw -> config.setProperty("zookeeper.ssl.trustStore.password", pw));
        });
        keyStore.ifPresent(p -> {
            config.setProperty("zookeeper.ssl.keyStore.location", p.toString());
            config.setProperty("zookeeper.ssl.keyStore.type", storeType(p));
            keyStorePassword.ifPresent(pw -> config.setProperty("zookeeper.ssl.keyStore.password", pw));
        });
    }

    private static String storeType(Path store) {
        String name = store.getFileName().toString().toLowerCase(Locale.ROOT);
        return name.endsWith(".jks") ? "JKS" : "PKCS12";
    }

    /** For messages: {@code digest user 'u', acl creator, TLS}; no secret. */
    String describe() {
        return (username.isPresent() ? "digest user '" + username.get() + "', " : "no user, ") + "acl " + acl.settingValue()
                + (tls() ? ", TLS" : "");
    }

    @Override
    public String toString() {
        return "Security[username=" + username.orElse("-") + ", password=" + (password.isPresent() ? Redaction.MASK : "-")
                + ", acl=" + acl.settingValue() + ", trustStore=" + trustStore.map(Path::toString).orElse("-")
                + ", keyStore=" + keyStore.map(Path::toString).orElse("-") + "]";
    }
}
