/**
 * A small Spring Boot billing service on Warden's starter. {@link BillingService} charges an order
 * under the merchant's lock ({@code @WithLock}) and deducts with the lease's fencing token, and runs a
 * month-end settlement that stops when its lease is lost; {@link BillingController} serves it over
 * HTTP; {@link LedgerConfiguration} drains the journal into an embedded H2 database. Start at
 * {@link BillingApplication}.
 */
package dev.warden.examples.spring;
