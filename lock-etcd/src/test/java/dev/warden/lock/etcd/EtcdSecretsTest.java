package dev.warden.lock.etcd;

import dev.warden.lock.tck.EndpointSecretsContractTest;

/** The etcd backend has no authentication yet: a secret in its endpoint is refused and never shown (issue 14). */
class EtcdSecretsTest extends EndpointSecretsContractTest {

    @Override
    protected String backend() {
        return "etcd";
    }
}
