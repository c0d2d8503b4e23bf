package dev.warden.lock.redis;

import dev.warden.lock.tck.BackendArchitecture;

class RedisArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "redis";
    }
}
