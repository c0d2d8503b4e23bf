package dev.warden.lock.etcd;

import dev.warden.lock.tck.BackendArchitecture;

class EtcdArchitectureTest extends BackendArchitecture {

    @Override
    protected String backend() {
        return "etcd";
    }
}
