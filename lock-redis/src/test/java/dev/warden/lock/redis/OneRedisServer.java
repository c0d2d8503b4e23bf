package dev.warden.lock.redis;

import dev.warden.testkit.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** What the kit asks of one redis-server, for the contract classes that run against one. */
final class OneRedisServer {

    private OneRedisServer() {
    }

    /** A port nothing listens on. */
    static String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "redis://127.0.0.1:" + s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean hasLock(RedisServer server, String namespace, String name) {
        return Long.valueOf(1).equals(server.command("EXISTS", lockKey(namespace, name)));
    }

    static void deleteLock(RedisServer server, String namespace, String name) {
        server.command("DEL", lockKey(namespace, name));
    }

    static void resume(RedisServer server) {
        if (server.isPaused()) {
            server.resume();
        }
    }

    private static String lockKey(String namespace, String name) {
        return "{" + namespace + ":" + name + "}:lock";
    }
}
