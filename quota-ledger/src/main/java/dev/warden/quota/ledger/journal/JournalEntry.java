package dev.warden.quota.ledger.journal;

import dev.warden.quota.Amount;
import dev.warden.quota.EntryKind;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.redis.Ids;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One entry of a partition's journal stream, as the quota scripts wrote it; and the journal's format in one
 * place (package-private): the fields the scripts write on each entry ({@code XADD ... account <id> kind <kind>
 * amount <n> request <id> balance <n> token <n|-> [lines ...] [expires <ms>]}, checked against every script by
 * {@code JournalFormatTest}), how an entry is decoded, and what each kind does to available and held quota.
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
        // No copy for the empty map of every kind but a posting (the consumer makes one entry per journal entry).
        lines = lines.isEmpty() ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(new TreeMap<>(lines));
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
        return availableDelta(kind, amount);
    }

    /** The change to what is held: +amount for a hold, −amount for a capture, release or expiry. */
    public long heldDelta() {
        return heldDelta(kind, amount);
    }

    /** Whether this is one half of a move between the buckets of a split account (keyed {@code <kind>:<move id>}). */
    public boolean ofMove() {
        return kind == EntryKind.MOVEOUT || kind == EntryKind.MOVEIN;
    }

    /** Whether this is one of a hold's entries (keyed {@code <kind>:<hold id>}, never compensated). */
    public boolean ofHold() {
        return ofHold(kind);
    }

    // ---- the format (package-private) ----

    public static final String ACCOUNT = "account";
    public static final String KIND = "kind";
    public static final String AMOUNT = "amount";
    public static final String REQUEST = "request";
    public static final String BALANCE = "balance";
    public static final String TOKEN = "token";
    /** A posting's changes to named balances, {@code name=+amount,name=-amount}. */
    public static final String LINES = "lines";
    /** A hold's expiry, epoch milliseconds (absent on entries written before holds carried it). */
    public static final String EXPIRES = "expires";
    /** Every field a script may write. */
    public static final List<String> FIELDS = List.of(ACCOUNT, KIND, AMOUNT, REQUEST, BALANCE, TOKEN, LINES, EXPIRES);

    /** The token field's value for an unfenced change. */
    public static final String NO_TOKEN = "-";

    /**
     * Decodes one entry, checking what the scripts guarantee: ids, the amount's range for its kind, a
     * non-negative balance, a canonical token. A hold's entries are keyed {@code <kind>:<hold id>}, a move's
     * halves {@code <kind>:<move id>} (':' is in no id, so these never meet a caller's request id); an
     * opening has the empty request id.
     *
     * @throws IllegalArgumentException saying what is wrong (the consumer quarantines such an entry)
     */
    public static JournalEntry decode(int partition, String stream, String entryId, Map<String, String> f) {
        try {
            String account = Ids.check(InvalidIdException.Field.ACCOUNT, require(f, ACCOUNT));
            EntryKind kind = kind(require(f, KIND));
            long amount = Long.parseLong(require(f, AMOUNT));
            if (kind == EntryKind.OPEN ? amount < 0 || amount > Amount.MAX
                    : kind == EntryKind.POST ? amount != 0 : Amount.problem(amount).isPresent()) {
                throw new IllegalArgumentException("amount " + amount + " is out of range for " + kind.wireName());
            }
            String request = f.getOrDefault(REQUEST, "");
            if (ofHold(kind)) {
                request = kind.wireName() + ":" + Ids.check(InvalidIdException.Field.HOLD, request);
            } else if (kind == EntryKind.MOVEOUT || kind == EntryKind.MOVEIN) {
                request = kind.wireName() + ":" + Ids.check(InvalidIdException.Field.REQUEST, request);
            } else if (kind == EntryKind.OPEN) {
                request = "";
            } else {
                Ids.check(InvalidIdException.Field.REQUEST, request);
            }
            long balance = Long.parseLong(require(f, BALANCE));
            if (balance < 0) {
                throw new IllegalArgumentException("negative balance " + balance);
            }
            String tokenText = f.getOrDefault(TOKEN, NO_TOKEN);
            OptionalLong token = tokenText.equals(NO_TOKEN) ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(tokenText));
            SortedMap<String, Long> lines = kind == EntryKind.POST ? JournalEntry.parseLines(f.get(LINES))
                    : Collections.emptySortedMap();
            return new JournalEntry(partition, stream, entryId, account, kind, amount, request, balance, token, lines);
        } catch (NullPointerException e) {
            throw new IllegalArgumentException(String.valueOf(e.getMessage()), e);
        }
    }

    /** Every kind by its wire name: the consumer decodes one per entry, and {@link EntryKind#fromWireName} searches. */
    private static final Map<String, EntryKind> KINDS = java.util.Arrays.stream(EntryKind.values())
            .collect(java.util.stream.Collectors.toUnmodifiableMap(EntryKind::wireName, k -> k));

    private static EntryKind kind(String wireName) {
        EntryKind kind = KINDS.get(wireName);
        return kind != null ? kind : EntryKind.fromWireName(wireName); // throws, saying what is wrong
    }

    /** A hold's expiry as its entry carries it, empty when absent or unreadable (restored as due). */
    public static OptionalLong expires(Map<String, String> f) {
        String text = f.get(EXPIRES);
        try {
            return text == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** Whether the kind is one of a hold's entries (keyed by the hold id, never compensated). */
    static boolean ofHold(EntryKind kind) {
        return kind == EntryKind.HOLD || kind == EntryKind.CAPTURE || kind == EntryKind.RELEASE || kind == EntryKind.EXPIRE;
    }

    /**
     * The change to the available balance: +amount for top-ups, refunds, releases, expiries and moves in,
     * −amount for deductions, holds and moves out, 0 for an opening (it sets the balance), a capture (it
     * takes from what is held) and a posting (it changes named balances).
     */
    public static long availableDelta(EntryKind kind, long amount) {
        return switch (kind) {
            case OPEN, CAPTURE, POST -> 0;
            case DEDUCT, HOLD, MOVEOUT -> -amount;
            case TOPUP, REFUND, RELEASE, EXPIRE, MOVEIN -> amount;
        };
    }

    /** The change to what is held: a hold adds, its capture, release or expiry takes away. */
    public static long heldDelta(EntryKind kind, long amount) {
        return switch (kind) {
            case HOLD -> amount;
            case CAPTURE, RELEASE, EXPIRE -> -amount;
            default -> 0;
        };
    }

    /**
     * The change to available + held, what reconciliation compares: a hold, release or expiry moves quota
     * between the two and changes nothing; a capture takes it out.
     */
    public static long totalDelta(EntryKind kind, long amount) {
        return availableDelta(kind, amount) + heldDelta(kind, amount);
    }

    private static String require(Map<String, String> f, String name) {
        String v = f.get(name);
        if (v == null) {
            throw new IllegalArgumentException("field '" + name + "' is missing");
        }
        return v;
    }
}
