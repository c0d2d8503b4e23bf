/**
 * Internal: the health probes of the lock client, the quota service and the ledger consumer, written against
 * {@link dev.warden.spring.probe.HealthReport} rather than a Spring Boot type, so that the starter's Boot 4
 * indicators and this module's Boot 3.5 indicators run the same checks. Not an API: it may change in any release.
 */
package dev.warden.spring.probe;
