/**
 * Micrometer meters and observations for Warden, usable without Spring: pass a
 * {@link MicrometerLockObserver} to
 * {@link dev.warden.lock.LockClient#create(java.util.Map, dev.warden.lock.LockObserver)}, wrap a quota
 * service in a {@link MeteredQuotaService}, and give a ledger consumer a
 * {@link MicrometerLedgerListener}. {@link LockObservations} puts acquisitions into the caller's trace,
 * and {@link LockNameTag} says whether lock meters carry the lock name (a time series per name). The
 * Spring Boot starter registers the first three as beans when the application has a
 * {@code MeterRegistry}.
 */
package dev.warden.micrometer;
