package dev.warden.quota;

/** Why an amount was refused. Amounts are whole minor units, 1 .. 2^53−1, written in ASCII digits. */
public enum AmountProblem {
    /** No text at all. */
    EMPTY,
    /** Spaces, tabs, line breaks or other white space anywhere, including around the digits. */
    WHITESPACE,
    /** Below zero. */
    NEGATIVE,
    /** A leading {@code +}. */
    SIGN,
    /** Zero: a change of nothing is a caller's mistake. */
    ZERO,
    /** A leading zero, such as {@code 007}: ambiguous (octal to some parsers). */
    LEADING_ZERO,
    /** A decimal point or comma: amounts are minor units, never fractions. */
    FRACTION,
    /** Scientific notation, such as {@code 1e3}. */
    EXPONENT,
    /** Hexadecimal, such as {@code 0x10}. */
    HEX,
    /** {@code inf}, {@code infinity} or {@code nan}. */
    NOT_FINITE,
    /** A digit outside ASCII {@code 0-9}, such as {@code ٣} or a full-width {@code ３}. */
    NON_ASCII_DIGIT,
    /** Anything else that is not a run of ASCII digits. */
    MALFORMED,
    /** Above 2^53−1, the largest amount a script can hold exactly. */
    TOO_LARGE,
    /** Above 2^63−1: not even a {@code long}. */
    BEYOND_LONG,
    /** The amount itself is fine, but adding it would take the balance above 2^53−1. */
    BALANCE_OVERFLOW
}
