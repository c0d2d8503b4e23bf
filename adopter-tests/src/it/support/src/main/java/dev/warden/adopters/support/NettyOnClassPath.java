package dev.warden.adopters.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.Collections;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Every Netty artifact on this class path and its version, read from the
 * {@code META-INF/io.netty.versions.properties} each Netty jar carries (as Netty's own
 * {@code Version.identify()} does), so the adopter tests check what actually ran.
 */
public final class NettyOnClassPath {

    private NettyOnClassPath() {
    }

    /** artifact id (netty-common, ...) to version. */
    public static Map<String, String> versions() {
        Map<String, String> versions = new TreeMap<>();
        try {
            for (URL url : Collections.list(NettyOnClassPath.class.getClassLoader()
                    .getResources("META-INF/io.netty.versions.properties"))) {
                Properties properties = new Properties();
                try (InputStream in = url.openStream()) {
                    properties.load(in);
                }
                for (String key : properties.stringPropertyNames()) {
                    if (key.endsWith(".version")) {
                        versions.put(key.substring(0, key.length() - ".version".length()), properties.getProperty(key));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return versions;
    }
}
