package dev.warden.lock.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The whole contract, core and fault clauses, on the middle step of a switch between two backends
 * ({@code warden.lock.migrate-from}), and the migration's own clauses: each step excludes the steps
 * beside it, and tokens keep rising through every step and back. A test names the two backends'
 * settings; the fault clauses act on the server of the backend moved to ({@link #serverAddress()} and
 * the rest are its), while the backend being left stays up.
 */
public abstract class LockMigrationContractTest extends LockProcessFaultContractTest {

    /** Settings of the step before the migration: the backend being left, alone (backend, endpoints, options). */
    protected abstract Map<String, Object> leftSettings();

    /** Settings of the step after it: the backend moved to, alone. */
    protected abstract Map<String, Object> targetSettings();

    /** Whether the backend being left holds, or has queued, anything for this lock. */
    protected abstract boolean hasLeftServerState(String namespace, String name);

    /** Whether the backend moved to holds, or has queued, anything for this lock. */
    protected abstract boolean hasTargetServerState(String namespace, String name);

    /** Removes the lock on the backend being left only, behind its holder's back. */
    protected abstract void removeOnLeftBackend(String namespace, String name);

    /** Removes the lock on the backend moved to only, behind its holder's back. */
    protected abstract void removeOnTargetBackend(String namespace, String name);

    /** The migrating step: the target's settings, plus the backend being left and its options. */
    @Override
    protected final Map<String, Object> settings() {
        Map<String, Object> left = leftSettings();
        String leftBackend = String.valueOf(left.get("warden.lock.backend"));
        Map<String, Object> s = new LinkedHashMap<>(targetSettings());
        s.put("warden.lock.migrate-from", leftBackend);
        s.put("warden.lock.migrate-from-endpoints", left.get("warden.lock.endpoints"));
        left.forEach((k, v) -> {
            if (k.startsWith("warden.lock." + leftBackend + ".")) {
                s.put(k, v);
            }
        });
        return s;
    }

    @Override
    protected final boolean hasServerState(String namespace, String name) {
        return hasLeftServerState(namespace, name) || hasTargetServerState(namespace, name);
    }

    /** The step raises etcd's and ZooKeeper's floors: a holder read adds the raised floor (see {@link LockKit}). */
    @Override
    protected boolean observedTermExact() {
        return false;
    }

    /** The migrating step's driver does not evict: an operator ends a hold before or after the step. */
    @Override
    protected boolean canForceRelease() {
        return false;
    }

    /** Shares are not carried across a switch: the migrating step refuses semaphores and read-write locks. */
    @Override
    protected boolean offersSharedRecipes() {
        return false;
    }

    /** Removes the lock on both backends. */
    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        removeOnLeftBackend(namespace, name);
        removeOnTargetBackend(namespace, name);
    }

    /** The three steps of a switch, in rollout order. */
    static final List<String> STEPS = List.of("left", "migrating", "target");

    @Nested
    @DisplayName("15. a switch between backends, step by step")
    class Migration extends MigrationClauses {
        Migration() {
            super(LockMigrationContractTest.this);
        }
    }
}
