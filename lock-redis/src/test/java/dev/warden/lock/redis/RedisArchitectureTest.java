package dev.warden.lock.redis;

import dev.warden.lock.tck.BackendArchitecture;

class RedisArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "redis";
    }

    /** The Redis foundation (connections, endpoints, credentials) the quota engine shares. */
    @Override
    protected java.util.List<String> sharedFoundations() {
        return java.util.List.of("dev.warden.redis..");
    }
}
