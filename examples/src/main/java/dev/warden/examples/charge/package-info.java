/**
 * Charging a merchant's quota: {@link dev.warden.examples.charge.ChargeMerchant} runs
 * {@code QuotaService.charge} under the merchant's lock, prints the outcome, and retries with the same
 * request id to show it is charged once.
 */
package dev.warden.examples.charge;
