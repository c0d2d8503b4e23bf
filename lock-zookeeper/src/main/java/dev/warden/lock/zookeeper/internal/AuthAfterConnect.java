package dev.warden.lock.zookeeper.internal;

import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Makes each ZooKeeper handle Curator asks for, and sends the digest identity once that handle's session
 * is up, before Curator hears of it, instead of with the {@code ConnectRequest}. Used over TLS only:
 * ZooKeeper 3.9's Netty client (which TLS needs) writes an auth packet queued before connecting together
 * with the {@code ConnectRequest}, and the server may answer the auth packet before the new session's
 * connect response, which the client then cannot read ({@code EOFException} in
 * {@code readConnectResult}): the attempt fails and is retried seconds later. ZooKeeper replays the
 * identity on reconnects of the same session, whose connect response the server sends at once; a new
 * session (a new handle, after expiry) gets it here again.
 */
final class AuthAfterConnect implements ZookeeperFactory {

    private final String scheme;
    private final byte[] auth;
    private final ZKClientConfig config;

    AuthAfterConnect(String scheme, byte[] auth, ZKClientConfig config) {
        this.scheme = scheme;
        this.auth = auth.clone();
        this.config = config;
    }

    @Override
    public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly)
            throws Exception {
        return newZooKeeper(connectString, sessionTimeout, watcher, canBeReadOnly, config);
    }

    @Override
    public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly,
                                  ZKClientConfig zkClientConfig) throws Exception {
        CompletableFuture<ZooKeeper> handle = new CompletableFuture<>();
        AtomicBoolean sent = new AtomicBoolean();
        Watcher first = event -> {
            if (event.getType() == Watcher.Event.EventType.None
                    && event.getState() == Watcher.Event.KeeperState.SyncConnected && sent.compareAndSet(false, true)) {
                // The constructor has returned by the time its session is up, or returns at once.
                handle.join().addAuthInfo(scheme, auth.clone());
            }
            watcher.process(event);
        };
        try {
            ZooKeeper zk = new ZooKeeper(connectString, sessionTimeout, first, canBeReadOnly,
                    zkClientConfig != null ? zkClientConfig : config);
            handle.complete(zk);
            return zk;
        } catch (Exception | Error e) {
            handle.completeExceptionally(e);
            throw e;
        }
    }
}
