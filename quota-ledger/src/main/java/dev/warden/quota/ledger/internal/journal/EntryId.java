package dev.warden.quota.ledger.internal.journal;

/** A stream entry id {@code <ms>-<seq>} as two numbers, ordered as Redis orders them. */
public record EntryId(long ms, long seq) implements Comparable<EntryId> {

    public static final EntryId ZERO = new EntryId(0, 0);

    /**
     * @throws IllegalArgumentException when {@code id} is not {@code <ms>-<seq>}
     */
    public static EntryId parse(String id) {
        int dash = id.indexOf('-');
        try {
            if (dash > 0) {
                return new EntryId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)));
            }
            return new EntryId(Long.parseLong(id), 0);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a stream entry id: '" + id + "'", e);
        }
    }

    @Override
    public int compareTo(EntryId o) {
        int c = Long.compareUnsigned(ms, o.ms);
        return c != 0 ? c : Long.compareUnsigned(seq, o.seq);
    }

    @Override
    public String toString() {
        return Long.toUnsignedString(ms) + "-" + Long.toUnsignedString(seq);
    }
}
