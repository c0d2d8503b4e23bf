package dev.warden.lock.jdbc;

import dev.warden.lock.LockException;
import dev.warden.lock.jdbc.internal.JdbcDriver;
import dev.warden.lock.jdbc.internal.JdbcSettings;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.util.List;

/**
 * The {@code jdbc} backend: locks kept in a PostgreSQL table (PostgreSQL 12 or later; no other database:
 * it relies on {@code INSERT ... ON CONFLICT}, {@code LISTEN/NOTIFY} and the server's clock).
 *
 * <p>Endpoint: one {@code jdbc:postgresql://host[:port]/database} URL; the login comes from
 * {@code warden.lock.jdbc.username} and {@code warden.lock.jdbc.password} ({@code -file}, {@code -env}), never
 * from the URL.
 *
 * <ul>
 *   <li>A lock is a row of {@code warden_lock} keyed by namespace and name: its owner, its fencing token and
 *       when it expires, on the database's clock ({@code clock_timestamp()}); no client's clock is ever
 *       compared with it. Acquiring is one statement: an update that takes over the row only when it is
 *       free or expired (a refused poll locks and writes nothing), or an insert for a name never locked.</li>
 *   <li>Tokens come from the sequence {@code warden_lock_token}, and each grant's is also above the row's
 *       last token and its floor, so they strictly increase per lock even when a statement that drew a
 *       value early commits late. A released lock's row stays (free), like Redis's fence key.</li>
 *   <li>Renewal moves the expiry if owner and token still match and it has not passed; release frees the
 *       row and sends {@code NOTIFY warden_lock} in the same statement. Waiters of a client share one
 *       listening connection; a holder that expires without releasing wakes them by a timer at its expiry.</li>
 *   <li>A holder whose connection dies keeps the lock until its TTL (a blip does not cost it); a holder
 *       paused past its TTL finds at its next renewal that the row expired or was taken (lost), and the
 *       grant's token is below the new holder's.</li>
 * </ul>
 *
 * <p>Semaphores and read-write locks keep one row per holder or waiter in {@code warden_lock_share}, in
 * arrival order; a poll is one call of the function {@code warden_lock_share_poll}, which serializes the
 * name's polls with an advisory lock, drops expired entries and grants the caller's entry when it fits.
 */
public final class JdbcLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "jdbc";
    }

    @Override
    public SettingTable settings() {
        return JdbcSettings.TABLE;
    }

    @Override
    public List<String> validate(LockConfig config) {
        return JdbcSettings.problems(config, System::getenv);
    }

    /** @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems; {@code UNAVAILABLE} when the database cannot be reached */
    @Override
    public LockDriver open(LockConfig config) {
        List<String> problems = validate(config);
        if (!problems.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid jdbc lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return JdbcDriver.open(config, JdbcSettings.of(config, System::getenv));
    }
}
