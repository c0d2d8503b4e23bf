package dev.warden.quota;

/**
 * Hooks of a {@link QuotaService}, so the engine needs no metrics library (bridge these to Micrometer
 * or logs). Called on the caller's thread: return quickly. An exception thrown by a hook is logged and
 * ignored. Every method has an empty default.
 */
public interface QuotaListener {

    /**
     * A {@link QuotaService#charge charge} ran without its lock because the lock backend failed and
     * {@code warden.quota.lock-unavailable=proceed}: it was priced on the balance read then and deducted
     * unfenced, so only the script's balance check guarded it (never more than the balance; a price
     * computed from a balance another charge has just changed is possible).
     *
     * @param cause why the lock could not be taken ({@link QuotaException.Reason#LOCK_FAILED})
     */
    default void chargedWithoutLock(String account, String requestId, QuotaException cause) {
    }
}
