/**
 * The {@code jdbc} lock backend: locks in a PostgreSQL table. Its provider is the only public class;
 * everything else is internal. See {@link dev.warden.lock.jdbc.JdbcLockProvider}.
 */
package dev.warden.lock.jdbc;
