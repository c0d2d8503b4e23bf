package dev.warden.quota.ledger.internal.journal;

import dev.warden.quota.redis.ScriptPrelude;
import dev.warden.redis.internal.RedisScript;

import java.util.List;

/** The ledger's own scripts (the engine's are quota-core's). */
public final class LedgerScripts {

    private static final String DIR = "/dev/warden/quota/ledger/";

    /** Reconciliation's read of one partition: marker, last journal entry id, balances (no writes). */
    public static final RedisScript SNAPSHOT = ScriptPrelude.load(LedgerScripts.class, DIR + "ledger_snapshot.lua");
    /** Reconciliation's read of the buckets of a split account in one partition (no writes). */
    public static final RedisScript BUCKET_SNAPSHOT = ScriptPrelude.load(LedgerScripts.class, DIR + "bucket_snapshot.lua");
    /** Repair: compare-and-set of a balance from the ledger. */
    public static final RedisScript RESTORE = ScriptPrelude.load(LedgerScripts.class, DIR + "ledger_restore.lua");
    /** Bootstrap: one account Redis lacks, whole (available, held, fence mark, open holds). */
    public static final RedisScript LOAD = ScriptPrelude.load(LedgerScripts.class, DIR + "ledger_load.lua");
    /** Acknowledge a committed batch and trim the journal below the oldest unacknowledged entry. */
    public static final RedisScript ACK_TRIM = ScriptPrelude.load(LedgerScripts.class, DIR + "ack_trim.lua");
    /** The consumers' registry: record a heartbeat, forget the silent, list the live. */
    public static final RedisScript HEARTBEAT = ScriptPrelude.load(LedgerScripts.class, DIR + "heartbeat.lua");

    /** Bootstrap: the missing half of a move between buckets that Redis lost. */
    public static final RedisScript SETTLE_MOVE = ScriptPrelude.load(LedgerScripts.class, DIR + "ledger_settle_move.lua");

    /** The owner forgets the group's consumers that hold nothing of a stream (dead, or moved on). */
    public static final RedisScript FORGET_CONSUMERS = ScriptPrelude.load(LedgerScripts.class, DIR + "forget_consumers.lua");

    public static final List<RedisScript> ALL = List.of(SNAPSHOT, BUCKET_SNAPSHOT, RESTORE, LOAD, SETTLE_MOVE, ACK_TRIM, HEARTBEAT,
            FORGET_CONSUMERS);

    private LedgerScripts() {
    }
}
