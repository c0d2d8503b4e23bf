package dev.warden.lock.tck;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.testkit.TcpProxy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The core contract plus the clauses that need a server and fault controls: pausing it, cutting one
 * client off behind a proxy, removing a lock behind its holder's back, and an unreachable server. A
 * backend with a server extends {@link LockProcessFaultContractTest} (this, and holders in other
 * processes killed and frozen) in its main test class, and this class in each further transport or
 * topology it is tested over (TLS, a cluster): what those vary is how clients reach the servers, which
 * these clauses exercise, while a dead holder's expiry is the servers' own and is checked once. A
 * backend without a server (in-memory) extends {@link LockContractTest} and never sees these clauses:
 * the capability is the type, not a skip.
 */
public abstract class LockFaultContractTest extends LockContractTest {

    // ----- what a server backend also says ------------------------------------------------------

    /** The address a proxy forwards to, to put one client behind it. */
    protected abstract InetSocketAddress serverAddress();

    /** The endpoints setting that reaches the same server through {@code 127.0.0.1:proxyPort}. */
    protected abstract String endpointsThrough(int proxyPort);

    /**
     * Every address a client of this backend connects to, each given its own port on the proxy that
     * cuts one client off: by default the one {@link #serverAddress()}. A topology whose clients learn
     * further addresses from the servers (a Sentinel's primary, a Cluster's nodes) lists them all.
     */
    protected List<InetSocketAddress> serverAddresses() {
        return List.of(serverAddress());
    }

    /**
     * The settings of a client whose traffic all passes through {@code proxy}: by default
     * {@link #settings()} with {@link #endpointsThrough(int) endpointsThrough(proxy.port())}. A
     * topology also maps the addresses its servers announce to the proxy's ports
     * ({@link TcpProxy#portFor}).
     */
    protected Map<String, Object> settingsThrough(TcpProxy proxy) {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.endpoints", endpointsThrough(proxy.port()));
        return s;
    }

    /** Endpoints where nothing answers. */
    protected abstract String unreachableEndpoints();

    /** Removes the lock behind its holder's back, as an operator or a bug might. */
    protected abstract void removeBehindHoldersBack(String namespace, String name);

    /** Freezes the server (SIGSTOP). */
    protected abstract void pauseServer();

    /** Thaws the server (SIGCONT); does nothing when it is not paused. */
    protected abstract void resumeServer();

    /**
     * Why a lease may be reported lost when its server freezes. A backend whose session notices the
     * silence before the lease's own deadline (ZooKeeper reports SUSPENDED at two thirds of the
     * session timeout) adds {@link LostReason#SESSION_LOST}; {@link LostReason#EXPIRED} stays
     * possible for it when a starved client thread notices the silence only after the deadline.
     */
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.EXPIRED);
    }

    @Override
    protected void undoFaults() {
        resumeServer();
    }

    /** A client whose traffic alone passes through a proxy the test controls. */
    protected Proxied clientBehindProxy() {
        return clientBehindProxy(LockObserver.NONE);
    }

    /** Like {@link #clientBehindProxy()}, observed. */
    protected Proxied clientBehindProxy(LockObserver observer) {
        TcpProxy proxy = closeAfter(TcpProxy.start(serverAddresses()));
        return new Proxied(client(settingsThrough(proxy), observer), proxy);
    }

    /** A client and the proxy in front of it. */
    protected record Proxied(LockClient client, TcpProxy proxy) {
    }

    // ----- the fault clauses --------------------------------------------------------------------

    @Nested
    @DisplayName("10. release under faults")
    class ReleaseUnderFaults extends FaultReleaseClauses {
        ReleaseUnderFaults() {
            super(LockFaultContractTest.this);
        }
    }

    @Nested
    @DisplayName("12. a lease lost to a fault turns invalid and tells its listener")
    class LossDetection extends LossDetectionClauses {
        LossDetection() {
            super(LockFaultContractTest.this);
        }
    }

    @Nested
    @DisplayName("13. an unreachable server")
    class Outages extends OutageClauses {
        Outages() {
            super(LockFaultContractTest.this);
        }
    }

    @Nested
    @DisplayName("19. semaphores and read-write locks through faults")
    class SharedRecipeFaults extends SharedRecipeFaultClauses {
        SharedRecipeFaults() {
            super(LockFaultContractTest.this);
        }
    }

    @Nested
    @DisplayName("16. an election's leader losing its lease")
    class ElectionFaults extends ElectionFaultClauses {
        ElectionFaults() {
            super(LockFaultContractTest.this);
        }
    }
}
