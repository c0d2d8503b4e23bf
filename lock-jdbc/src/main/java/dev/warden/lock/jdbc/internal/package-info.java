/**
 * The PostgreSQL driver behind {@link dev.warden.lock.jdbc.JdbcLockProvider}: {@link JdbcSettings} reads the
 * configuration, {@link Statements} holds every SQL statement and the schema, {@link Calls} runs them on a
 * pool within the request timeout, {@link Notifications} is the one listening connection that wakes
 * waiters, {@link JdbcAttempt} is one contender, {@link JdbcDriver} ties them together. Internal: no
 * compatibility promise.
 */
package dev.warden.lock.jdbc.internal;
