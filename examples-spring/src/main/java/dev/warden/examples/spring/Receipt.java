package dev.warden.examples.spring;

/**
 * What one charge did.
 *
 * @param fencingToken  the token of the merchant's lease the charge ran under, carried by the deduction
 * @param balanceBefore the balance the price was computed from, read under the lock
 * @param amount        the price
 * @param outcome       the deduction's outcome: APPLIED, DUPLICATE, INSUFFICIENT, STALE_FENCE, ...
 * @param balanceAfter  the balance after it (when applied)
 */
public record Receipt(String merchantId, String orderId, long fencingToken, long balanceBefore, long amount,
                      String outcome, long balanceAfter) {
}
