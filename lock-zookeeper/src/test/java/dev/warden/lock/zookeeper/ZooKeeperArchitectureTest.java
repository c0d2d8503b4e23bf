package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.BackendArchitecture;

class ZooKeeperArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "zookeeper";
    }
}
