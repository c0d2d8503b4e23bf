package dev.warden.quota;

import java.util.Locale;
import java.util.Optional;

/**
 * An amount of quota in whole minor units: 1 .. 2^53−1 ({@link #MAX}), the range a Lua number in
 * the Redis scripts holds exactly. Its text form is ASCII digits only, without sign, leading zero,
 * white space, fraction or exponent; {@link #parse(String)} refuses everything else with an
 * {@link InvalidAmountException} whose {@link AmountProblem} says why. The scripts check the text
 * they receive the same way, independently.
 *
 * @param minorUnits the amount, 1 .. {@link #MAX}
 */
public record Amount(long minorUnits) {

    /** 2^53−1. */
    public static final long MAX = (1L << 53) - 1;

    private static final String MAX_LONG_TEXT = Long.toString(Long.MAX_VALUE);

    /**
     * @throws InvalidAmountException when {@code minorUnits} is not in 1 .. {@link #MAX}
     */
    public Amount {
        Optional<AmountProblem> problem = problem(minorUnits);
        if (problem.isPresent()) {
            throw new InvalidAmountException(problem.get(), "amount " + minorUnits + " is not in 1.." + MAX
                    + " minor units (" + problem.get() + ")");
        }
    }

    /** Same as the constructor. */
    public static Amount of(long minorUnits) {
        return new Amount(minorUnits);
    }

    /**
     * Parses the text form strictly.
     *
     * @throws InvalidAmountException with the {@link AmountProblem}
     * @throws NullPointerException when {@code text} is null
     */
    public static Amount parse(String text) {
        if (text == null) {
            throw new NullPointerException("text");
        }
        AmountProblem problem = problem(text);
        if (problem != null) {
            throw new InvalidAmountException(problem, "'" + printable(text) + "' is not an amount of minor units"
                    + " (1.." + MAX + ", ASCII digits only): " + problem);
        }
        return new Amount(Long.parseLong(text));
    }

    /** What is wrong with {@code minorUnits}, if anything. */
    public static Optional<AmountProblem> problem(long minorUnits) {
        if (minorUnits == 0) {
            return Optional.of(AmountProblem.ZERO);
        }
        if (minorUnits < 0) {
            return Optional.of(AmountProblem.NEGATIVE);
        }
        if (minorUnits > MAX) {
            return Optional.of(AmountProblem.TOO_LARGE);
        }
        return Optional.empty();
    }

    /** The text form: ASCII digits. */
    @Override
    public String toString() {
        return Long.toString(minorUnits);
    }

    private static AmountProblem problem(String s) {
        if (s.isEmpty()) {
            return AmountProblem.EMPTY;
        }
        boolean asciiDigits = true;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                return AmountProblem.WHITESPACE;
            }
            asciiDigits &= c >= '0' && c <= '9';
        }
        if (asciiDigits) {
            if (s.chars().allMatch(c -> c == '0')) {
                return AmountProblem.ZERO;
            }
            if (s.charAt(0) == '0') {
                return AmountProblem.LEADING_ZERO;
            }
            if (s.length() > MAX_LONG_TEXT.length()
                    || s.length() == MAX_LONG_TEXT.length() && s.compareTo(MAX_LONG_TEXT) > 0) {
                return AmountProblem.BEYOND_LONG;
            }
            return Long.parseLong(s) > MAX ? AmountProblem.TOO_LARGE : null;
        }
        char first = s.charAt(0);
        if (first == '-') {
            return AmountProblem.NEGATIVE;
        }
        if (first == '+') {
            return AmountProblem.SIGN;
        }
        String lower = s.toLowerCase(Locale.ROOT);
        if (lower.equals("inf") || lower.equals("infinity") || lower.equals("nan")) {
            return AmountProblem.NOT_FINITE;
        }
        if (lower.startsWith("0x")) {
            return AmountProblem.HEX;
        }
        if (lower.matches("[0-9]+[.,][0-9]*")) {
            return AmountProblem.FRACTION;
        }
        if (lower.matches("[0-9.]+e[-+]?[0-9]*")) {
            return AmountProblem.EXPONENT;
        }
        if (s.codePoints().anyMatch(Character::isDigit)
                && s.codePoints().allMatch(Character::isDigit)) {
            return AmountProblem.NON_ASCII_DIGIT;
        }
        return AmountProblem.MALFORMED;
    }

    private static String printable(String text) {
        StringBuilder b = new StringBuilder();
        text.codePoints().limit(40).forEach(c -> {
            if (Character.isISOControl(c)) {
                b.append(String.format("\\u%04x", c));
            } else {
                b.appendCodePoint(c);
            }
        });
        return text.codePointCount(0, text.length()) > 40 ? b + "..." : b.toString();
    }
}
