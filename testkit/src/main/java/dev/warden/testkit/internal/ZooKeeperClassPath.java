package dev.warden.testkit.internal;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The class path a ZooKeeper server JVM is launched with: this JVM's own class path, plus the jar
 * of each class a ZooKeeper 3.9 server needs when it was loaded from elsewhere. A missing class
 * fails loudly with the artifact to add, never a silent skip.
 */
final class ZooKeeperClassPath {

    /** Class a server needs, and the artifact it comes from. */
    private static final Map<String, String> REQUIRED = new LinkedHashMap<>();

    static {
        REQUIRED.put("org.apache.zookeeper.server.quorum.QuorumPeerMain", "org.apache.zookeeper:zookeeper:3.9.x");
        REQUIRED.put("org.apache.jute.Record", "org.apache.zookeeper:zookeeper-jute:3.9.x");
        REQUIRED.put("org.slf4j.LoggerFactory", "org.slf4j:slf4j-api");
        // ZooKeeper marks these two provided, but a 3.9 server does not start without them.
        REQUIRED.put("com.codahale.metrics.Reservoir", "io.dropwizard.metrics:metrics-core");
        REQUIRED.put("org.xerial.snappy.SnappyInputStream", "org.xerial.snappy:snappy-java");
        // Its configuration links Netty's TLS classes even when TLS is off.
        REQUIRED.put("io.netty.handler.ssl.SslContext", "io.netty:netty-handler");
    }

    /**
     * What a server with a secure client port needs besides: its Netty connection factory links
     * Netty's epoll classes even where it runs on NIO, and the parent keeps ZooKeeper's Netty 4.1 out,
     * so testkit declares Netty 4.2's (classes only, no native library).
     */
    private static final Map<String, String> NETTY = Map.of(
            "io.netty.channel.epoll.Epoll", "io.netty:netty-transport-classes-epoll (at the netty-bom version)");

    private static volatile String cached;
    private static volatile String cachedNetty;

    private ZooKeeperClassPath() {
    }

    static String get() {
        String cp = cached;
        if (cp == null) {
            cp = compute(REQUIRED, "testkit declares them at runtime scope; if you excluded them, add them back (test scope)");
            cached = cp;
        }
        return cp;
    }

    /** The class path of a server on Netty ({@code serverCnxnFactory=NettyServerCnxnFactory}, for a secure port). */
    static String withNetty() {
        String cp = cachedNetty;
        if (cp == null) {
            Map<String, String> required = new LinkedHashMap<>(REQUIRED);
            required.putAll(NETTY);
            cp = compute(required, "a server with a secure client port runs on Netty; testkit declares these at runtime"
                    + " scope; if you excluded them, add them back (test scope)");
            cachedNetty = cp;
        }
        return cp;
    }

    private static String compute(Map<String, String> requiredClasses, String hint) {
        Set<String> entries = new LinkedHashSet<>();
        String own = System.getProperty("java.class.path", "");
        for (String entry : own.split(File.pathSeparator)) {
            if (!entry.isBlank()) {
                entries.add(entry);
            }
        }
        List<String> missing = new ArrayList<>();
        ClassLoader loader = ZooKeeperClassPath.class.getClassLoader();
        for (Map.Entry<String, String> required : requiredClasses.entrySet()) {
            Class<?> type;
            try {
                type = Class.forName(required.getKey(), false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                missing.add(required.getValue() + " (" + required.getKey() + ")");
                continue;
            }
            jarOf(type).ifPresent(entries::add);
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("cannot launch a ZooKeeper server: missing from the class path: "
                    + String.join(", ", missing) + ". " + hint);
        }
        return String.join(File.pathSeparator, entries);
    }

    private static java.util.Optional<String> jarOf(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(Path.of(source.getLocation().toURI()).toString());
        } catch (URISyntaxException | IllegalArgumentException e) {
            return java.util.Optional.empty();
        }
    }
}
