package dev.warden.quota;

import java.util.Objects;

/**
 * An account id or request id that cannot be used. Ids are non-empty, at most
 * {@link QuotaService#MAX_ID_BYTES} bytes of well-formed UTF-8, free of control characters
 * (including NUL) and of {@code :}, <code>{</code> and <code>}</code>, which belong to the key layout and to
 * Redis Cluster hash tags.
 */
public class InvalidIdException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** Which id was refused. */
    public enum Field {
        ACCOUNT,
        REQUEST,
        /** The id of an authorisation hold ({@link QuotaService#hold}). */
        HOLD,
        /**
         * The name of a named balance ({@link QuotaService#post}): 1..{@value QuotaService#MAX_BALANCE_NAME_BYTES}
         * characters of {@code a-z}, {@code 0-9}, {@code _} and {@code -}.
         */
        BALANCE
    }

    /** Why it was refused. */
    public enum Problem {
        EMPTY,
        TOO_LONG,
        /** A control character, NUL included. */
        CONTROL_CHARACTER,
        /** {@code :}, <code>{</code> or <code>}</code>. */
        RESERVED_CHARACTER,
        /** An unpaired UTF-16 surrogate: not encodable as UTF-8. */
        MALFORMED,
        /** A balance name with a character other than {@code a-z}, {@code 0-9}, {@code _} or {@code -}. */
        CHARACTER_NOT_ALLOWED
    }

    private final Field field;
    private final Problem problem;

    public InvalidIdException(Field field, Problem problem, String message) {
        super(message);
        this.field = Objects.requireNonNull(field, "field");
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    public Field field() {
        return field;
    }

    public Problem problem() {
        return problem;
    }
}
