package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The namespace node {@code /<namespace>} of a client whose nodes are protected ({@code acl} other than
 * {@code open}): created at open as a persistent node with that ACL, not as a container, so the
 * server never reaps it and another user can never claim the namespace after it emptied. The first
 * digest user to create it owns it. When it exists already its ACL is read and checked: a namespace
 * that does not let this identity create, read and delete is refused at open as
 * {@code ACCESS_DENIED}, and one anyone may write is reported in the log (its lock nodes are still
 * protected, but any client may take a lock name first).
 */
final class Namespaces {

    private static final Logger log = LoggerFactory.getLogger(Namespaces.class);
    private static final int NEEDED = ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ;

    private Namespaces() {
    }

    /** Makes sure {@code path} exists and admits this client (synchronous, bounded by Curator's retries). */
    static void ensure(CuratorFramework curator, Security security, String path, String servers) throws Exception {
        try {
            curator.create().withMode(CreateMode.PERSISTENT).forPath(path);
            log.debug("created the namespace node {} at {} ({})", path, servers, security.describe());
            return;
        } catch (KeeperException.NodeExistsException e) {
            // Check it below.
        } catch (KeeperException e) {
            if (Calls.accessDenied(e.code())) {
                throw denied(servers, "cannot create the namespace node " + path + " (" + e.code()
                        + "): the ACL of its parent does not admit " + security.describe(), e);
            }
            throw e;
        }
        List<ACL> acl;
        try {
            acl = curator.getACL().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            ensure(curator, security, path, servers);
            return;
        } catch (KeeperException e) {
            if (Calls.accessDenied(e.code())) {
                throw denied(servers, "the namespace node " + path + " does not admit " + security.describe() + " (" + e.code()
                        + "): it belongs to another user, or the password is wrong", e);
            }
            throw e;
        }
        String me = security.digestId().orElseThrow();
        int granted = 0;
        int world = 0;
        for (ACL entry : acl) {
            Id id = entry.getId();
            if ("world".equals(id.getScheme()) && "anyone".equals(id.getId())) {
                granted |= entry.getPerms();
                world |= entry.getPerms();
            } else if ("digest".equals(id.getScheme()) && me.equals(id.getId())) {
                granted |= entry.getPerms();
            } else if (!"digest".equals(id.getScheme())) {
                // ip, x509, sasl, super: the server judges those; the first request will tell.
                return;
            }
        }
        if ((granted & NEEDED) != NEEDED) {
            throw denied(servers, "the namespace node " + path + " does not let " + security.describe()
                    + " create, read and delete: it belongs to another user, or the password is wrong", null);
        }
        if ((world & (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE)) != 0) {
            log.warn("the namespace node {} at {} is writable by anyone (created without ACLs): any client can take a lock"
                    + " name in it first; delete it while no lock is held, or set its ACL, to have it recreated as {}'s",
                    path, servers, security.describe());
        }
    }

    private static LockException denied(String servers, String why, Throwable cause) {
        return new LockException(LockException.Reason.ACCESS_DENIED, "ZooKeeper at " + servers + ": " + why, cause);
    }
}
