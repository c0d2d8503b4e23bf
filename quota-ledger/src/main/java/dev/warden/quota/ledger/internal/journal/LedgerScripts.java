package dev.warden.quota.ledger.internal.journal;

import dev.warden.quota.spi.LuaScript;

import java.util.List;

/** The ledger's own scripts (the engine's are quota-core's). */
public final class LedgerScripts {

    private static final String DIR = "/dev/warden/quota/ledger/";

    /** Reconciliation's read of one partition: marker, last journal entry id, balances (no writes). */
    public static final LuaScript SNAPSHOT = LuaScript.load(LedgerScripts.class, DIR + "ledger_snapshot.lua");
    /** Reconciliation's read of the buckets of a split account in one partition (no writes). */
    public static final LuaScript BUCKET_SNAPSHOT = LuaScript.load(LedgerScripts.class, DIR + "bucket_snapshot.lua");
    /** Repair: compare-and-set of a balance from the ledger. */
    public static final LuaScript RESTORE = LuaScript.load(LedgerScripts.class, DIR + "ledger_restore.lua");
    /** Bootstrap: one account Redis lacks, whole (available, held, fence mark, open holds). */
    public static final LuaScript LOAD = LuaScript.load(LedgerScripts.class, DIR + "ledger_load.lua");
    /** Acknowledge a committed batch and trim the journal below the oldest unacknowledged entry. */
    public static final LuaScript ACK_TRIM = LuaScript.load(LedgerScripts.class, DIR + "ack_trim.lua");
    /** The consumers' registry: record a heartbeat, forget the silent, list the live. */
    public static final LuaScript HEARTBEAT = LuaScript.load(LedgerScripts.class, DIR + "heartbeat.lua");

    /** Bootstrap: the missing half of a move between buckets that Redis lost. */
    public static final LuaScript SETTLE_MOVE = LuaScript.load(LedgerScripts.class, DIR + "ledger_settle_move.lua");

    /** The owner forgets the group's consumers that hold nothing of a stream (dead, or moved on). */
    public static final LuaScript FORGET_CONSUMERS = LuaScript.load(LedgerScripts.class, DIR + "forget_consumers.lua");

    public static final List<LuaScript> ALL = List.of(SNAPSHOT, BUCKET_SNAPSHOT, RESTORE, LOAD, SETTLE_MOVE, ACK_TRIM, HEARTBEAT,
            FORGET_CONSUMERS);

    private LedgerScripts() {
    }
}
