/**
 * The PostgreSQL driver behind {@link dev.warden.lock.jdbc.JdbcLockProvider}: {@link JdbcSettings} reads the
 * configuration, {@link Statements} holds every SQL statement and the schema, {@link Calls} runs them on a
 * pool within the request timeout, {@link Notifications} is the one listening connection that wakes
 * waiters ({@link JdbcWait} is one contender's wait), {@link QueryAttempt} is one contender — for a lock
 * ({@link JdbcAttempt}) or a shared name ({@link SharedAttempt}) — and {@link JdbcDriver} ties them together. Internal: no
 * compatibility promise.
 */
package dev.warden.lock.jdbc.internal;
