package dev.warden.quota.ledger;

import dev.warden.quota.Amount;
import dev.warden.quota.EntryKind;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.spi.Ids;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SortedMap;

/**
 * The journal's format, in one place: the fields the quota scripts write on each stream entry
 * ({@code XADD ... account <id> kind <kind> amount <n> request <id> balance <n> token <n|-> [lines ...]
 * [expires <ms>]}; {@code JournalFormatTest} checks every script against {@link #FIELDS}), how an entry
 * is decoded, and what each kind does to an account's available and held quota.
 */
final class JournalFormat {

    static final String ACCOUNT = "account";
    static final String KIND = "kind";
    static final String AMOUNT = "amount";
    static final String REQUEST = "request";
    static final String BALANCE = "balance";
    static final String TOKEN = "token";
    /** A posting's changes to named balances, {@code name=+amount,name=-amount}. */
    static final String LINES = "lines";
    /** A hold's expiry, epoch milliseconds (absent on entries written before holds carried it). */
    static final String EXPIRES = "expires";
    /** Every field a script may write. */
    static final List<String> FIELDS = List.of(ACCOUNT, KIND, AMOUNT, REQUEST, BALANCE, TOKEN, LINES, EXPIRES);

    /** The token field's value for an unfenced change. */
    static final String NO_TOKEN = "-";

    private JournalFormat() {
    }

    /**
     * Decodes one entry, checking what the scripts guarantee: ids, the amount's range for its kind, a
     * non-negative balance, a canonical token. A hold's entries are keyed {@code <kind>:<hold id>}, a move's
     * halves {@code <kind>:<move id>} (':' is in no id, so these never meet a caller's request id); an
     * opening has the empty request id.
     *
     * @throws IllegalArgumentException saying what is wrong (the consumer quarantines such an entry)
     */
    static JournalEntry decode(int partition, String stream, String entryId, Map<String, String> f) {
        try {
            String account = Ids.check(InvalidIdException.Field.ACCOUNT, require(f, ACCOUNT));
            EntryKind kind = EntryKind.fromWireName(require(f, KIND));
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

    /** A hold's expiry as its entry carries it, empty when absent or unreadable (restored as due). */
    static OptionalLong expires(Map<String, String> f) {
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
    static long availableDelta(EntryKind kind, long amount) {
        return switch (kind) {
            case OPEN, CAPTURE, POST -> 0;
            case DEDUCT, HOLD, MOVEOUT -> -amount;
            case TOPUP, REFUND, RELEASE, EXPIRE, MOVEIN -> amount;
        };
    }

    /** The change to what is held: a hold adds, its capture, release or expiry takes away. */
    static long heldDelta(EntryKind kind, long amount) {
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
    static long totalDelta(EntryKind kind, long amount) {
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
