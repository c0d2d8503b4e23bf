package dev.warden.lock.jdbc.internal;

import java.util.List;

/**
 * Every statement the driver sends, each one round trip in autocommit. Times are the database's:
 * {@code clock_timestamp()} is the server's clock when the statement runs, so a lock's expiry is judged
 * by one clock whichever client reads it. A free row has no owner and expires at {@code -infinity}.
 */
final class Statements {

    private Statements() {
    }

    /** The channel every release and eviction notifies, with the lock's wake-up key as payload. */
    static final String CHANNEL = "warden_lock";

    /**
     * The channel a poll notifies when a live holder whose grant is watched ({@code warden_lock.watched}: a
     * client keeps it after release) refuses it, with the lock's wake-up key as payload.
     */
    static final String CONTENDER_CHANNEL = "warden_lock_contender";

    /**
     * The schema, created under a transaction-scoped advisory lock so that clients opening together do
     * not race on the catalog (two concurrent {@code CREATE ... IF NOT EXISTS} can fail on its unique index).
     * Rows are only ever updated in place (no indexed column changes), so updates stay heap-only; the
     * fill factor leaves them room on the page.
     */
    static final List<String> SCHEMA = List.of(
            "SELECT pg_advisory_xact_lock(7355608, 1)",
            "CREATE SEQUENCE IF NOT EXISTS warden_lock_token",
            "CREATE TABLE IF NOT EXISTS warden_lock ("
                    + " namespace text NOT NULL,"
                    + " name text NOT NULL,"
                    + " owner text,"
                    + " token bigint NOT NULL,"
                    + " expires_at timestamptz NOT NULL,"
                    + " floor bigint NOT NULL DEFAULT 0,"
                    + " evicted_token bigint,"
                    + " watched boolean NOT NULL DEFAULT false,"
                    + " PRIMARY KEY (namespace, name)) WITH (fillfactor = 50)",
            "CREATE TABLE IF NOT EXISTS warden_lock_epoch (namespace text PRIMARY KEY, epoch integer NOT NULL)",
            "CREATE TABLE IF NOT EXISTS warden_lock_share ("
                    + " namespace text NOT NULL,"
                    + " name text NOT NULL,"
                    + " token bigint NOT NULL,"
                    + " owner text NOT NULL,"
                    + " weight bigint NOT NULL,"
                    + " lim bigint NOT NULL,"
                    + " granted boolean NOT NULL,"
                    + " expires_at timestamptz NOT NULL,"
                    + " PRIMARY KEY (namespace, name, token))",
            "CREATE UNIQUE INDEX IF NOT EXISTS warden_lock_share_owner ON warden_lock_share (namespace, name, owner)");

    /**
     * Whether {@code warden_lock} lacks the column {@code watched} (a table created before lease caching): it
     * is added only then, since even {@code ADD COLUMN IF NOT EXISTS} takes the table's exclusive lock.
     */
    static final String WATCHED_COLUMN_MISSING = "SELECT NOT EXISTS (SELECT 1 FROM pg_attribute"
            + " WHERE attrelid = to_regclass('warden_lock') AND attname = 'watched' AND NOT attisdropped)";

    /** Adds the column {@code watched} to a table created before lease caching; a default of false rewrites nothing. */
    static final String ADD_WATCHED_COLUMN = "ALTER TABLE warden_lock ADD COLUMN IF NOT EXISTS watched boolean NOT NULL DEFAULT false";

    /**
     * Whether the shared poll function is missing: it is created only then, not replaced at every client's
     * start (a replacement makes every session plan it again). A changed body comes with a new name.
     */
    static final String SHARE_POLL_FUNCTION_MISSING =
            "SELECT to_regprocedure('warden_lock_share_poll(text, text, text, bigint, bigint, bigint)') IS NULL";

    /**
     * One poll of a shared name's contender, in one transaction under a per-name advisory lock (so entries
     * arrive, draw tokens and are granted in one order): drops entries whose expiry passed (a dead holder's
     * or waiter's), refreshes the caller's entry or enqueues it with a fresh token, and grants it when the
     * weights of every entry ahead (held or waiting) plus its own fit its limit. Returns the token when
     * granted, else how long until the first holder ahead expires (null when none is held).
     */
    static final String SHARE_POLL_FUNCTION = "CREATE FUNCTION warden_lock_share_poll("
            + "ns text, nm text, ow text, w bigint, lim bigint, ttl_ms bigint,"
            + " OUT granted_token bigint, OUT wait_ms bigint) LANGUAGE plpgsql AS $$\n"
            + "DECLARE mine bigint; ahead numeric; now_ts timestamptz;\n"
            + "BEGIN\n"
            + "  PERFORM pg_advisory_xact_lock(7355608, hashtext(ns || chr(10) || nm));\n"
            + "  now_ts := clock_timestamp();\n"
            + "  DELETE FROM warden_lock_share WHERE namespace = ns AND name = nm AND expires_at <= now_ts;\n"
            + "  UPDATE warden_lock_share SET expires_at = now_ts + ttl_ms * interval '1 millisecond'\n"
            + "    WHERE namespace = ns AND name = nm AND owner = ow RETURNING token INTO mine;\n"
            + "  IF mine IS NULL THEN\n"
            + "    mine := nextval('warden_lock_token');\n"
            + "    INSERT INTO warden_lock_share (namespace, name, token, owner, weight, lim, granted, expires_at)\n"
            + "      VALUES (ns, nm, mine, ow, w, lim, false, now_ts + ttl_ms * interval '1 millisecond');\n"
            + "  END IF;\n"
            + "  SELECT coalesce(sum(weight), 0),\n"
            + "      ceil(extract(epoch FROM min(expires_at) FILTER (WHERE granted) - now_ts) * 1000)::bigint\n"
            + "    INTO ahead, wait_ms FROM warden_lock_share WHERE namespace = ns AND name = nm AND token < mine;\n"
            + "  IF ahead + w <= lim THEN\n"
            + "    UPDATE warden_lock_share SET granted = true WHERE namespace = ns AND name = nm AND token = mine;\n"
            + "    granted_token := mine;\n"
            + "    wait_ms := NULL;\n"
            + "  END IF;\n"
            + "END $$";

    /** Parameters: namespace, name, owner, weight, limit, TTL ms. */
    static final String SHARE_POLL = "SELECT granted_token, wait_ms FROM warden_lock_share_poll(?, ?, ?, ?, ?, ?)";

    /** Parameters: TTL ms, namespace, name, owner, token. One row updated when renewed. */
    static final String SHARE_RENEW = "UPDATE warden_lock_share SET expires_at = clock_timestamp() + ? * interval '1 millisecond'"
            + " WHERE namespace = ? AND name = ? AND owner = ? AND token = ? AND granted AND expires_at > clock_timestamp()";

    /**
     * Parameters: namespace, name, owner, token, wake-up key. A row when the entry was removed; its column says
     * whether it was still live. Those behind it are notified either way.
     */
    static final String SHARE_RELEASE = "WITH " + Statements.ASYNC_COMMIT + ", d AS (DELETE FROM warden_lock_share"
            + "   WHERE namespace = ? AND name = ? AND owner = ? AND token = ? RETURNING expires_at > clock_timestamp() AS live)"
            + " SELECT live, pg_notify('" + CHANNEL + "', ?) FROM d, c";

    /** Parameters: namespace, name, owner, wake-up key. Removes a waiting entry (never a granted one). */
    static final String SHARE_ABANDON = "WITH d AS (DELETE FROM warden_lock_share"
            + "   WHERE namespace = ? AND name = ? AND owner = ? AND NOT granted RETURNING 1)"
            + " SELECT pg_notify('" + CHANNEL + "', ?) FROM d";

    /**
     * Takes the lock when it is free or expired; either way also reads what the holder's expiry was before
     * the statement (to wait that long at most). An existing row is taken over by an {@code UPDATE} whose
     * condition is the expiry, so a poll refused by a live holder locks nothing and writes nothing (it needs no
     * transaction id and no commit flush); only a name never locked before is inserted ({@code ON CONFLICT DO
     * NOTHING} against a racing first insert). The token is the larger of a fresh sequence value and the
     * row's last token or floor + 1, decided under the row's lock: a value drawn before another grant
     * committed can never go out below it. Parameters: owner, TTL ms, namespace, name; namespace, name, owner,
     * TTL ms, namespace, name; namespace, name.
     */
    static final String ACQUIRE = "WITH u AS (UPDATE warden_lock AS l"
            + "   SET owner = ?, token = GREATEST(nextval('warden_lock_token'), l.token + 1, l.floor + 1),"
            + "       expires_at = clock_timestamp() + ? * interval '1 millisecond'"
            + "   WHERE l.namespace = ? AND l.name = ? AND l.expires_at <= clock_timestamp()"
            + "   RETURNING l.token),"
            + " i AS (INSERT INTO warden_lock (namespace, name, owner, token, expires_at)"
            + "   SELECT ?, ?, ?, nextval('warden_lock_token'), clock_timestamp() + ? * interval '1 millisecond'"
            + "   WHERE NOT EXISTS (SELECT 1 FROM warden_lock WHERE namespace = ? AND name = ?)"
            + "   ON CONFLICT (namespace, name) DO NOTHING"
            + "   RETURNING token)"
            + " SELECT coalesce((SELECT token FROM u), (SELECT token FROM i)),"
            + " (SELECT CASE WHEN expires_at > clock_timestamp()"
            + "    THEN ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint ELSE 0 END"
            + "    FROM warden_lock WHERE namespace = ? AND name = ?)";

    /**
     * {@link #ACQUIRE} on a table with the column {@code watched}: a grant sets it (true when the client may
     * keep the lock after release), and a poll that a live watched holder refuses notifies
     * {@link #CONTENDER_CHANNEL} — only then does a refused poll write (a notification needs a commit), and it
     * commits without waiting for the flush, as a release does (a notification lost in a crash is repeated by the
     * contender's next poll); a grant commits as configured. The statement's parts see the row as it was before
     * it: a poll refused by a live holder notifies exactly when that holder is watched; one whose update waited
     * for a concurrent release and was then granted may notify needlessly (the keeper just lets go); one refused
     * by a holder that just expired notifies nothing and polls again at once (the expiry left is zero). Parameters:
     * owner, TTL ms, watched, namespace, name; namespace, name, owner, TTL ms, watched, namespace, name; namespace,
     * name; wake-up key, namespace, name.
     */
    static final String ACQUIRE_WATCHED = "WITH u AS (UPDATE warden_lock AS l"
            + "   SET owner = ?, token = GREATEST(nextval('warden_lock_token'), l.token + 1, l.floor + 1),"
            + "       expires_at = clock_timestamp() + ? * interval '1 millisecond', watched = ?"
            + "   WHERE l.namespace = ? AND l.name = ? AND l.expires_at <= clock_timestamp()"
            + "   RETURNING l.token),"
            + " i AS (INSERT INTO warden_lock (namespace, name, owner, token, expires_at, watched)"
            + "   SELECT ?, ?, ?, nextval('warden_lock_token'), clock_timestamp() + ? * interval '1 millisecond', ?"
            + "   WHERE NOT EXISTS (SELECT 1 FROM warden_lock WHERE namespace = ? AND name = ?)"
            + "   ON CONFLICT (namespace, name) DO NOTHING"
            + "   RETURNING token),"
            + " c AS (SELECT set_config('synchronous_commit', CASE WHEN EXISTS (SELECT 1 FROM u) OR EXISTS (SELECT 1 FROM i)"
            + "   THEN current_setting('synchronous_commit') ELSE 'off' END, true) AS s)"
            + " SELECT coalesce((SELECT token FROM u), (SELECT token FROM i)),"
            + " (SELECT CASE WHEN expires_at > clock_timestamp()"
            + "    THEN ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint ELSE 0 END"
            + "    FROM warden_lock WHERE namespace = ? AND name = ?),"
            + " (SELECT count(pg_notify('" + CONTENDER_CHANNEL + "', ?)) FROM warden_lock"
            + "    WHERE namespace = ? AND name = ? AND watched AND expires_at > clock_timestamp()),"
            + " (SELECT s FROM c)";

    /**
     * A release commits without waiting for its flush ({@code synchronous_commit} off for its own transaction):
     * {@code NOTIFY} commits hold one server-wide lock until they end, so waiting there for the disk would line
     * every release up behind the others. Safe: a release lost in a crash leaves the row to expire at its TTL,
     * and any later grant's synchronous commit flushes the release before it (the log is written in order).
     */
    private static final String ASYNC_COMMIT = "c AS (SELECT set_config('synchronous_commit', 'off', true) AS s)";

    /** Parameters: TTL ms, namespace, name, owner, token. One row updated when renewed. */
    static final String RENEW = "UPDATE warden_lock SET expires_at = clock_timestamp() + ? * interval '1 millisecond'"
            + " WHERE namespace = ? AND name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp()";

    /** Parameters: namespace, name, owner, token, wake-up key. A row when released (and waiters notified). */
    static final String RELEASE = "WITH " + ASYNC_COMMIT + ", r AS (UPDATE warden_lock SET owner = NULL, expires_at = '-infinity'"
            + "   WHERE namespace = ? AND name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp()"
            + "   RETURNING 1)"
            + " SELECT pg_notify('" + CHANNEL + "', ?) FROM r, c";

    /** Parameters: namespace, name, token, wake-up key. A row when evicted; the token is kept as the mark. */
    static final String EVICT = "WITH r AS (UPDATE warden_lock SET owner = NULL, expires_at = '-infinity', evicted_token = token"
            + "   WHERE namespace = ? AND name = ? AND token = ? AND owner IS NOT NULL AND expires_at > clock_timestamp()"
            + "   RETURNING 1)"
            + " SELECT pg_notify('" + CHANNEL + "', ?) FROM r";

    /** Parameters: namespace, name, token. A row when that grant was evicted. */
    static final String EVICTED = "SELECT 1 FROM warden_lock WHERE namespace = ? AND name = ? AND evicted_token = ?";

    /** Parameters: namespace, name. The holder while its lease runs. */
    static final String HOLDER = "SELECT owner, token FROM warden_lock"
            + " WHERE namespace = ? AND name = ? AND owner IS NOT NULL AND expires_at > clock_timestamp()";

    /** Parameters: namespace, name after which to continue, page size. One page of holders in name order. */
    static final String HOLDERS = "SELECT name, owner, token FROM warden_lock"
            + " WHERE namespace = ? AND name > ? AND owner IS NOT NULL AND expires_at > clock_timestamp()"
            + " ORDER BY name LIMIT ?";

    /** Parameters: floor, namespace, name, owner, token. One row updated while the grant holds. */
    static final String RAISE_FLOOR = "UPDATE warden_lock SET floor = GREATEST(floor, ?)"
            + " WHERE namespace = ? AND name = ? AND owner = ? AND token = ? AND expires_at > clock_timestamp()";

    /** Parameters: namespace, namespace, epoch. The epoch recorded before, 0 when none. */
    static final String RECORD_EPOCH = "WITH before AS (SELECT epoch FROM warden_lock_epoch WHERE namespace = ?),"
            + " up AS (INSERT INTO warden_lock_epoch AS e (namespace, epoch) VALUES (?, ?)"
            + "   ON CONFLICT (namespace) DO UPDATE SET epoch = GREATEST(e.epoch, EXCLUDED.epoch))"
            + " SELECT coalesce((SELECT epoch FROM before), 0)";
}
