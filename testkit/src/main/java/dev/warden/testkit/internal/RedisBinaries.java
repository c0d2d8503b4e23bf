package dev.warden.testkit.internal;

import java.nio.file.Path;

/** The local binaries a Redis topology (Sentinel, Cluster) is made of: they cannot come from elsewhere. */
public final class RedisBinaries {

    private static final String INSTALL = "install it (Debian/Ubuntu: apt-get install -y redis-server, which brings"
            + " redis-cli), or set WARDEN_REDIS_SERVER (and WARDEN_REDIS_CLI) to the binaries; a Sentinel or Cluster"
            + " topology needs local binaries (WARDEN_REDIS_URI and Docker do not provide one)";

    private RedisBinaries() {
    }

    /** {@code redis-server}. */
    public static Path server() {
        return RedisProcess.findBinary(System::getenv)
                .orElseThrow(() -> new IllegalStateException("redis-server not found on PATH: " + INSTALL));
    }

    /** {@code redis-cli}. */
    public static Path cli() {
        return RedisProcess.findCli(server(), System::getenv)
                .orElseThrow(() -> new IllegalStateException("redis-cli not found beside redis-server or on PATH: " + INSTALL));
    }
}
