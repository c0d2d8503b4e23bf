package dev.warden.quota.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaListener;
import dev.warden.quota.redis.QuotaConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The policy around a charge: the account's lock orders "read, price, deduct" between callers, and
 * {@code warden.quota.lock-unavailable} says what happens when the lock backend fails. The lock is
 * an optimisation: the deduct script's balance check, or a hold's one-way state, keeps money right.
 *
 * <p>Thread-safe: immutable, over a thread-safe lock client (none when the lock choice is {@code none}).
 */
final class AccountLocks implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AccountLocks.class);

    private final QuotaConfig config;
    private final LockClient locks;
    private final QuotaListener listener;

    private AccountLocks(QuotaConfig config, LockClient locks, QuotaListener listener) {
        this.config = config;
        this.locks = locks;
        this.listener = listener;
    }

    /** The lock client the configuration asks for (none for {@code none}); its failure is a {@link QuotaException}. */
    static AccountLocks create(QuotaConfig config, QuotaListener listener) {
        if (config.lock() == QuotaConfig.LockChoice.NONE) {
            return new AccountLocks(config, null, listener);
        }
        try {
            return new AccountLocks(config, LockClient.create(config.lockSettings()), listener);
        } catch (LockException e) {
            Reason reason = switch (e.reason()) {
                case CONFIGURATION, NO_PROVIDER, AMBIGUOUS_PROVIDER -> Reason.CONFIGURATION;
                case INTERRUPTED -> Reason.INTERRUPTED;
                default -> Reason.LOCK_FAILED;
            };
            throw new QuotaException(reason, "cannot create the " + config.lock().wireName() + " lock client for"
                    + " charges: " + e.getMessage(), e);
        }
    }

    /** The name of an account's lock, the same in every engine on the same lock backend. */
    static String lockName(String account) {
        return "quota:" + account;
    }

    /**
     * Runs {@code locked} under the account's lease, or {@code unlocked} without a lock configured or,
     * when the lock backend fails and {@code lock-unavailable=proceed}, after telling the listener.
     */
    <T> T underLock(String account, String requestId, Function<Lease, T> locked, Supplier<T> unlocked) {
        if (locks == null) {
            return unlocked.get();
        }
        Lease lease;
        try {
            lease = acquire(account);
        } catch (QuotaException e) {
            if (e.reason() != Reason.LOCK_FAILED || config.lockUnavailable() != QuotaConfig.LockUnavailable.PROCEED) {
                throw e;
            }
            log.warn("the lock backend failed ({}); charging account {} without its lock, as"
                    + " warden.quota.lock-unavailable=proceed says", e.getMessage(), account);
            try {
                listener.chargedWithoutLock(account, requestId, e);
            } catch (RuntimeException hookFailed) {
                log.warn("a quota listener failed", hookFailed);
            }
            return unlocked.get();
        }
        try {
            return locked.apply(lease);
        } finally {
            try {
                lease.release();
            } catch (LockException e) {
                log.warn("could not release the lock of account {} after a charge; it expires after its TTL", account, e);
            }
        }
    }

    private Lease acquire(String account) {
        DistributedLock lock = locks.lock(lockName(account));
        Optional<Lease> lease;
        try {
            lease = lock.tryAcquire(config.lockWait());
        } catch (LockException e) {
            if (e.reason() == LockException.Reason.INTERRUPTED) {
                throw new QuotaException(Reason.INTERRUPTED, "interrupted while waiting for the lock of account " + account, e);
            }
            throw new QuotaException(Reason.LOCK_FAILED, "could not take the lock of account " + account + ": "
                    + e.getMessage(), e);
        }
        return lease.orElseThrow(() -> new QuotaException(Reason.LOCK_TIMEOUT, "the lock of account " + account
                + " was not free within " + config.lockWait().toMillis() + " ms"));
    }

    /** Closes the lock client; a failure is logged, never thrown, so the rest still closes. */
    @Override
    public void close() {
        if (locks == null) {
            return;
        }
        try {
            locks.close();
        } catch (RuntimeException e) {
            log.warn("closing the lock client failed", e);
        }
    }
}
