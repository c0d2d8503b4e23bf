/**
 * The machinery of a benchmark run: the closed-loop {@link Runner}, the servers' CPU time
 * ({@link ServerCpu}), the report writer ({@link Report}) and the pictures drawn from its JSON lines
 * ({@link ThroughputChart}, {@link LatencyChart}, rows grouped by {@link ScenarioGroup}); and the rows
 * that are not one workload against one client: what the server itself does with the deduct script ({@link ServerLimit}), the
 * quota engine with ledger consumers draining into PostgreSQL for a sustained time
 * ({@link SustainedLedger}), and what each kind of quota key costs in Redis memory
 * ({@link QuotaSizing}). Internal to Warden: no compatibility promise.
 */
package dev.warden.benchmarks.internal;
