package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.EndpointSecretsContractTest;

/** The ZooKeeper backend has no authentication yet: a secret in its endpoint is refused and never shown (issue 14). */
class ZooKeeperSecretsTest extends EndpointSecretsContractTest {

    @Override
    protected String backend() {
        return "zookeeper";
    }
}
