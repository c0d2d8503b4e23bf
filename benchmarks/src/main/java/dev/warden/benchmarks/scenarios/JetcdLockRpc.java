package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lock.LockResponse;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Baseline: jetcd's server-side Lock RPC, lock then unlock, on the same etcd as Warden's etcd
 * backend. Each thread has its own lease, kept alive by jetcd, as separate processes would: the
 * Lock RPC keys a waiter by its lease, so threads sharing one lease would share the lock.
 */
public final class JetcdLockRpc implements Workload {

    private final CriticalSection shared = new CriticalSection();

    private final List<String> clientUrls;
    private final boolean contended;
    private final String namespace;
    private Client client;
    private long[] leases;
    private ByteSequence[] names;

    public JetcdLockRpc(List<String> clientUrls, boolean contended, String namespace) {
        this.clientUrls = clientUrls;
        this.contended = contended;
        this.namespace = namespace;
    }

    @Override
    public String scenario() {
        return contended ? "lock, contended (one name)" : "lock, uncontended (a name per thread)";
    }

    @Override
    public Server server() {
        return Server.ETCD;
    }

    @Override
    public String implementation() {
        return "jetcd Lock RPC";
    }

    @Override
    public void setUp(int threads) throws Exception {
        client = Client.builder().endpoints(clientUrls.toArray(String[]::new)).build();
        leases = new long[threads];
        names = new ByteSequence[threads];
        for (int i = 0; i < threads; i++) {
            leases[i] = client.getLeaseClient().grant(10).get(10, TimeUnit.SECONDS).getID();
            client.getLeaseClient().keepAlive(leases[i], new io.grpc.stub.StreamObserver<>() {
                @Override
                public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                }
            });
            names[i] = ByteSequence.from(namespace + (contended ? "/bench-hot" : "/bench-" + i), StandardCharsets.UTF_8);
        }
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contended ? shared : new CriticalSection();
        ByteSequence name = names[index];
        long lease = leases[index];
        return () -> {
            LockResponse held = client.getLockClient().lock(name, lease).get(30, TimeUnit.SECONDS);
            try {
                section.run();
            } finally {
                client.getLockClient().unlock(held.getKey()).get(30, TimeUnit.SECONDS);
            }
        };
    }

    @Override
    public void close() throws Exception {
        if (client != null) {
            for (long lease : leases) {
                client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            }
            client.close();
        }
    }
}
