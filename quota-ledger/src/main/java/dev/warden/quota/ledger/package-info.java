/**
 * The ledger: the relational database that is the source of truth behind the quota engine's Redis,
 * and reconciliation between the two.
 *
 * <ul>
 *   <li>{@link dev.warden.quota.ledger.Ledger}: the versioned schema (PostgreSQL in production and CI; H2
 *       as the demo's embedded default, tested too) and the quarantine. The schema changes only when
 *       asked: {@code Ledger.migrate(dataSource)}, the CLI's {@code schema --migrate}, or the shipped
 *       migrations applied by hand. Nothing runs DDL implicitly.</li>
 *   <li>{@link dev.warden.quota.ledger.LedgerConsumer}: journal consumers (a consumer group per
 *       partition stream; each partition owned by one consumer through a Warden lock, its token checked
 *       by the database in every batch's transaction; acknowledgement and trimming after commit;
 *       take-over of a dead consumer's entries; quarantine; compensation of replays), with
 *       {@link dev.warden.quota.ledger.consume.LedgerListener} as their metrics hooks.</li>
 *   <li>{@link dev.warden.quota.ledger.Reconciler}: check, repair (dry run unless asked) and bootstrap
 *       of an empty Redis from the database, one-shot or scheduled.</li>
 *   <li>The rest is by concept, one floor each, no package importing one above it: {@code journal},
 *       {@code consume}, {@code reconcile} and {@code store} hold the public vocabulary (entries, the
 *       listener, reports, the dialect); {@code internal.journal} (the streams), {@code internal.store}
 *       (every SQL statement, over plain records), {@code internal.consume} and {@code internal.reconcile}
 *       the machinery. This package, on top, holds the three entry points.</li>
 *   <li>The command line ({@code ledger schema | consume | reconcile | bootstrap | quarantine |
 *       compensations}) is its own artifact, {@code quota-ledger-cli}, so this library brings neither
 *       picocli nor a connection pool.</li>
 * </ul>
 *
 * <p>Dependencies: the library takes any {@link javax.sql.DataSource}; the PostgreSQL driver is a
 * runtime dependency of quota-ledger; HikariCP backs the CLI's pool (in quota-ledger-cli); H2 ({@code com.h2database:h2}) is
 * not shipped: a demo that wants the embedded database adds it and passes an H2 URL
 * ({@code jdbc:h2:file:./ledger} or {@code jdbc:h2:mem:ledger;DB_CLOSE_DELAY=-1}).
 *
 * <p>After Redis lost its data: every partition reports DATA_LOST (its marker is gone). Run
 * {@code bootstrap} before traffic returns: it loads the database's accounts and then writes the marker
 * of every partition, including partitions that hold no account yet (quota-core writes a partition's
 * marker only when an account is opened there, so a fresh, markerless partition would report
 * DATA_LOST). Do not open accounts first: opening writes that partition's marker, after which its
 * missing accounts read as "not found" rather than DATA_LOST. What Redis had journaled but the consumer
 * had not yet moved into the database is lost with it; reconciliation shows every account's Redis and
 * database figures, and the difference.
 */
package dev.warden.quota.ledger;
