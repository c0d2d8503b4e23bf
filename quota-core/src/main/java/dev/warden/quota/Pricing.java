package dev.warden.quota;

/** The caller's pricing step of a {@link QuotaService#charge charge}, run while the account's lock is held. */
@FunctionalInterface
public interface Pricing {

    /**
     * @param balance the account's balance, read under the lock
     * @return the amount to deduct, in minor units
     */
    long price(long balance);
}
