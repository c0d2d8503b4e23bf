package dev.warden.lock.migration;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * One backend of a migration as the kit reaches it: its settings, its state read directly, and, for the
 * backend moved to, the fault controls the fault clauses use.
 */
interface Side {

    /** Backend and endpoints. */
    Map<String, Object> settings();

    /** Whether the backend holds or queues anything for the lock. */
    boolean hasState(String namespace, String name);

    /** Removes the lock behind its holder's back. */
    void remove(String namespace, String name);

    InetSocketAddress address();

    /** The endpoints setting that reaches the server through a proxy on {@code 127.0.0.1:port}. */
    String endpointsThrough(int port);

    /** The endpoints setting of a server that is not there. */
    String unreachable();

    void pause();

    /** Thaws the server; nothing when it is not paused. */
    void resume();
}
