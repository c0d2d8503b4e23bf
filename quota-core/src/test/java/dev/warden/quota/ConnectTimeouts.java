package dev.warden.quota;

import java.util.HashMap;
import java.util.Map;

/**
 * The connect timeouts of every client these tests create. A cold JVM's first connection under CI load can take over
 * the 5 s default; connecting is not what these tests test. (Public for {@code internal}'s tests; test sources only.)
 */
public final class ConnectTimeouts {

    /** The connect timeout of every client, engine and lock, as the kit's clients have. */
    public static final String CONNECT_TIMEOUT = "20s";

    /** {@code warden.quota.connect-timeout} and {@code warden.lock.connect-timeout}, both {@link #CONNECT_TIMEOUT}. */
    public static final Map<String, String> SETTINGS = Map.of("warden.quota.connect-timeout", CONNECT_TIMEOUT,
            "warden.lock.connect-timeout", CONNECT_TIMEOUT);

    private ConnectTimeouts() {
    }

    /** A new map: {@code settings} with both connect timeouts added (a timeout {@code settings} sets itself stays). */
    public static Map<String, String> with(Map<String, String> settings) {
        Map<String, String> s = new HashMap<>(SETTINGS);
        s.putAll(settings);
        return s;
    }
}
