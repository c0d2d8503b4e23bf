package dev.warden.quota;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AmountTest {

    /** Every bad text the issue lists, and a few more, with the problem it must be reported as. */
    static Stream<Arguments> badTexts() {
        return Stream.of(
                Arguments.of("", AmountProblem.EMPTY),
                Arguments.of("0", AmountProblem.ZERO),
                Arguments.of("000", AmountProblem.ZERO),
                Arguments.of("-1", AmountProblem.NEGATIVE),
                Arguments.of("-0", AmountProblem.NEGATIVE),
                Arguments.of("+5", AmountProblem.SIGN),
                Arguments.of("007", AmountProblem.LEADING_ZERO),
                Arguments.of("1.5", AmountProblem.FRACTION),
                Arguments.of("1.", AmountProblem.FRACTION),
                Arguments.of("10.00", AmountProblem.FRACTION),
                Arguments.of("1,5", AmountProblem.FRACTION),
                Arguments.of("1e3", AmountProblem.EXPONENT),
                Arguments.of("1E3", AmountProblem.EXPONENT),
                Arguments.of("1e+3", AmountProblem.EXPONENT),
                Arguments.of("0x10", AmountProblem.HEX),
                Arguments.of("0XFF", AmountProblem.HEX),
                Arguments.of("inf", AmountProblem.NOT_FINITE),
                Arguments.of("Infinity", AmountProblem.NOT_FINITE),
                Arguments.of("NaN", AmountProblem.NOT_FINITE),
                Arguments.of(" 5", AmountProblem.WHITESPACE),
                Arguments.of("5 ", AmountProblem.WHITESPACE),
                Arguments.of("5\n", AmountProblem.WHITESPACE),
                Arguments.of("\t5", AmountProblem.WHITESPACE),
                Arguments.of("1 000", AmountProblem.WHITESPACE),
                Arguments.of("5\u00a0", AmountProblem.WHITESPACE),
                Arguments.of("\u0663", AmountProblem.NON_ASCII_DIGIT),          // Arabic-Indic three
                Arguments.of("\uff15\uff10", AmountProblem.NON_ASCII_DIGIT),    // full-width 50
                Arguments.of("1\u0662", AmountProblem.NON_ASCII_DIGIT),
                Arguments.of("9007199254740992", AmountProblem.TOO_LARGE),      // 2^53
                Arguments.of("9223372036854775807", AmountProblem.TOO_LARGE),   // 2^63-1: a long, but too large
                Arguments.of("9223372036854775808", AmountProblem.BEYOND_LONG), // 2^63
                Arguments.of("99999999999999999999999", AmountProblem.BEYOND_LONG),
                Arguments.of("12abc", AmountProblem.MALFORMED),
                Arguments.of("1_000", AmountProblem.MALFORMED),
                Arguments.of("five", AmountProblem.MALFORMED),
                Arguments.of("5\u0000", AmountProblem.MALFORMED));
    }

    @ParameterizedTest(name = "\"{0}\" -> {1}")
    @MethodSource("badTexts")
    @DisplayName("a bad text is refused with its problem")
    void refusesBadText(String text, AmountProblem problem) {
        InvalidAmountException e = catchThrowableOfType(InvalidAmountException.class, () -> Amount.parse(text));
        assertThat(e).isNotNull();
        assertThat(e.problem()).isEqualTo(problem);
        assertThat(e).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "42", "9007199254740991"})
    void parsesCanonicalDigits(String text) {
        assertThat(Amount.parse(text).minorUnits()).isEqualTo(Long.parseLong(text));
        assertThat(Amount.parse(text)).hasToString(text);
    }

    @Test
    void nullIsANullPointer() {
        assertThatThrownBy(() -> Amount.parse(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void longsOutsideTheRangeAreRefused() {
        assertThat(Amount.of(Amount.MAX).minorUnits()).isEqualTo(9007199254740991L);
        assertThat(catchThrowableOfType(InvalidAmountException.class, () -> Amount.of(0)).problem()).isEqualTo(AmountProblem.ZERO);
        assertThat(catchThrowableOfType(InvalidAmountException.class, () -> Amount.of(-7)).problem()).isEqualTo(AmountProblem.NEGATIVE);
        assertThat(catchThrowableOfType(InvalidAmountException.class, () -> Amount.of(Amount.MAX + 1)).problem())
                .isEqualTo(AmountProblem.TOO_LARGE);
        assertThat(catchThrowableOfType(InvalidAmountException.class, () -> Amount.of(Long.MAX_VALUE)).problem())
                .isEqualTo(AmountProblem.TOO_LARGE);
        assertThat(catchThrowableOfType(InvalidAmountException.class, () -> Amount.of(Long.MIN_VALUE)).problem())
                .isEqualTo(AmountProblem.NEGATIVE);
    }
}
