package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;

import dev.warden.quota.Amount;
import dev.warden.quota.spi.Ids;

import java.util.Collections;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One entry of a partition's journal stream, as the quota scripts wrote it.
 *
 * @param partition    the partition whose stream holds it
 * @param stream       the stream's key, {@code quota:{pN}:journal}
 * @param entryId      the stream entry id, {@code <ms>-<seq>}
 * @param account      the account changed
 * @param kind         what the change was
 * @param amount       the amount in minor units (an opening may be 0)
 * @param requestId    the caller's request id; empty for an opening, which has none; for a hold's entries
 *                     {@code <kind>:<hold id>} (hold, capture, release, expire each at most once per hold); for a
 *                     move between the buckets of a split account {@code moveout:<move id>} or {@code movein:<move id>}
 * @param balanceAfter the account's available balance in Redis right after the change
 * @param token        the fencing token of a fenced deduction, empty when none
 * @param lines        a posting's changes to named balances by name (credits positive); empty for other kinds
 */
public record JournalEntry(int partition, String stream, String entryId, String account, EntryKind kind, long amount,
                           String requestId, long balanceAfter, OptionalLong token, SortedMap<String, Long> lines) {

    /** An entry without lines (every kind but {@link EntryKind#POST}). */
    public JournalEntry(int partition, String stream, String entryId, String account, EntryKind kind, long amount,
                        String requestId, long balanceAfter, OptionalLong token) {
        this(partition, stream, entryId, account, kind, amount, requestId, balanceAfter, token, new TreeMap<>());
    }

    public JournalEntry {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(entryId, "entryId");
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(token, "token");
        lines = Collections.unmodifiableSortedMap(new TreeMap<>(lines));
    }

    /**
     * Reads a posting's {@code lines} field, {@code name=+amount,name=-amount} (names ascending), as
     * {@code post.lua} writes it.
     *
     * @throws IllegalArgumentException when it is not one
     */
    public static SortedMap<String, Long> parseLines(String text) {
        SortedMap<String, Long> lines = new TreeMap<>();
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("a posting without lines");
        }
        for (String line : text.split(",", -1)) {
            int eq = line.indexOf('=');
            if (eq < 0 || eq + 2 > line.length()) {
                throw new IllegalArgumentException("posting line '" + line + "' is not name=+amount or name=-amount");
            }
            String name = Ids.checkBalanceName(line.substring(0, eq));
            char sign = line.charAt(eq + 1);
            long amount = Long.parseLong(line.substring(eq + 2));
            if ((sign != '+' && sign != '-') || Amount.problem(amount).isPresent() || !line.substring(eq + 2).equals(Long.toString(amount))) {
                throw new IllegalArgumentException("posting line '" + line + "' is not name=+amount or name=-amount");
            }
            if (lines.put(name, sign == '-' ? -amount : amount) != null) {
                throw new IllegalArgumentException("balance '" + name + "' twice in one posting");
            }
        }
        return lines;
    }

    /**
     * The ledger's key for this entry: (account, request id). Request ids are unique per account; an
     * opening has the empty request id (an account is opened once).
     */
    public Key key() {
        return new Key(account, requestId);
    }

    /** (account, request id): the primary key of {@code ledger_entries}. */
    public record Key(String account, String requestId) {
        public Key {
            Objects.requireNonNull(account, "account");
            Objects.requireNonNull(requestId, "requestId");
        }
    }

    /**
     * The change to the available balance: +amount for top-ups, refunds, releases and expiries, −amount
     * for deductions and holds, 0 for an opening and a capture (it takes from what is held).
     */
    public long delta() {
        return JournalFormat.availableDelta(kind, amount);
    }

    /** The change to what is held: +amount for a hold, −amount for a capture, release or expiry. */
    public long heldDelta() {
        return JournalFormat.heldDelta(kind, amount);
    }

    /** Whether this is one half of a move between the buckets of a split account (keyed {@code <kind>:<move id>}). */
    public boolean ofMove() {
        return kind == EntryKind.MOVEOUT || kind == EntryKind.MOVEIN;
    }

    /** Whether this is one of a hold's entries (keyed {@code <kind>:<hold id>}, never compensated). */
    public boolean ofHold() {
        return JournalFormat.ofHold(kind);
    }
}
