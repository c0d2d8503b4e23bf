package dev.warden.quota.internal;

import dev.warden.quota.redis.KeyLayout;

import dev.warden.quota.ConnectTimeouts;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts on their own, run with raw EVALSHA over testkit's socket, so Java's validation is
 * bypassed: the scripts must refuse bad arguments by themselves, before any write.
 */
class ScriptsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static final String MARKER = LAYOUT.markerValue();
    static QuotaService quota;

    String account;
    String request;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    @BeforeEach
    void openAccount() {
        account = "merchant-" + UUID.randomUUID();
        request = "order-" + UUID.randomUUID();
        quota.open(account, 1_000);
        for (Scripts.Script script : Scripts.Script.values()) {
            assertThat(server().command("SCRIPT", "LOAD", Scripts.source(script))).isEqualTo(Scripts.digest(script));
        }
    }

    static RedisServer server() {
        return redis.server();
    }

    /** Every bad amount text of the issue: zero, negative, fractions, exponents, hex, inf/nan, white space, non-ASCII digits, beyond 2^53 and 2^63. */
    static Stream<String> badAmounts() {
        return Stream.of("", "0", "00", "-1", "-0", "+5", "007", "1.5", "1.", "1,5", "1e3", "1E3", "0x10", "0XFF",
                "inf", "-inf", "Infinity", "nan", "NaN", " 5", "5 ", "5\n", "\t5", "1 000", "\u0663", "\uff15",
                "9007199254740992", "9223372036854775807", "9223372036854775808", "99999999999999999999999",
                "12abc", "5\u0000", "\u00a05");
    }

    static Stream<String> badIds() {
        return Stream.of("", "a".repeat(129), "\u00e9".repeat(65), "a\u0000b", "a\nb", "a\rb", "a\u007fb", "a:b", "{p1}",
                "a{b", "a}b", "a\u0085b", "a\u0080b", "a\u009fb");
    }

    Object deduct(String acct, String amount, String req, String token) {
        int p = LAYOUT.partition(acct);
        return server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:" + acct, LAYOUT.base(p) + ":req:" + acct + ":" + req, LAYOUT.journal(p),
                acct, amount, req, token, "60000", MARKER);
    }

    Object credit(String acct, String amount, String req, String kind) {
        int p = LAYOUT.partition(acct);
        return server().command("EVALSHA", Scripts.digest(Scripts.Script.CREDIT), "4", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:" + acct, LAYOUT.base(p) + ":req:" + acct + ":" + req, LAYOUT.journal(p),
                acct, amount, req, kind, "60000", MARKER);
    }

    Object open(String acct, String amount) {
        int p = LAYOUT.partition(acct);
        return server().command("EVALSHA", Scripts.digest(Scripts.Script.OPEN), "3", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:" + acct, LAYOUT.journal(p), acct, amount, MARKER);
    }

    /** Everything a script could have written, across all partitions. */
    List<Object> state() {
        List<Object> state = new ArrayList<>();
        state.add(server().command("DBSIZE"));
        state.add(server().command("HGETALL", LAYOUT.accountKey(account)));
        for (int p = 0; p < LAYOUT.partitions(); p++) {
            state.add(server().command("XLEN", LAYOUT.journal(p)));
        }
        return state;
    }

    static String first(Object reply) {
        return (String) ((List<?>) reply).get(0);
    }

    @ParameterizedTest(name = "amount \"{0}\"")
    @MethodSource("badAmounts")
    @DisplayName("every script refuses a bad amount text before writing")
    void badAmountText(String amount) {
        List<Object> before = state();

        assertThat(first(deduct(account, amount, request, "-"))).isEqualTo("invalid_amount");
        assertThat(first(credit(account, amount, request, "topup"))).isEqualTo("invalid_amount");
        assertThat(first(credit(account, amount, request, "refund"))).isEqualTo("invalid_amount");
        String fresh = "merchant-" + UUID.randomUUID();
        if (!amount.equals("0")) {
            assertThat(first(open(fresh, amount))).isEqualTo("invalid_amount");
        }

        assertThat(state()).isEqualTo(before);
        assertThat(server().command("EXISTS", LAYOUT.accountKey(fresh))).isEqualTo(0L);
    }

    @Test
    @DisplayName("the script names the problem as Java does for the plain cases")
    void problemsNamed() {
        assertThat(deduct(account, "0", request, "-")).isEqualTo(List.of("invalid_amount", "ZERO"));
        assertThat(deduct(account, "-5", request, "-")).isEqualTo(List.of("invalid_amount", "NEGATIVE"));
        assertThat(deduct(account, "1.5", request, "-")).isEqualTo(List.of("invalid_amount", "FRACTION"));
        assertThat(deduct(account, "1e3", request, "-")).isEqualTo(List.of("invalid_amount", "EXPONENT"));
        assertThat(deduct(account, "0x10", request, "-")).isEqualTo(List.of("invalid_amount", "HEX"));
        assertThat(deduct(account, "nan", request, "-")).isEqualTo(List.of("invalid_amount", "NOT_FINITE"));
        assertThat(deduct(account, " 5", request, "-")).isEqualTo(List.of("invalid_amount", "WHITESPACE"));
        assertThat(deduct(account, "9007199254740992", request, "-")).isEqualTo(List.of("invalid_amount", "TOO_LARGE"));
        assertThat(deduct(account, "9223372036854775808", request, "-")).isEqualTo(List.of("invalid_amount", "BEYOND_LONG"));
        assertThat(deduct(account, "\u0663", request, "-")).isEqualTo(List.of("invalid_amount", "MALFORMED"));
    }

    @ParameterizedTest(name = "id #{index}")
    @MethodSource("badIds")
    @DisplayName("every script refuses a bad account or request id before writing")
    void badIdText(String id) {
        List<Object> before = state();

        assertThat(deduct(id, "5", request, "-")).asList().startsWith("invalid_id", "ACCOUNT");
        assertThat(deduct(account, "5", id, "-")).asList().startsWith("invalid_id", "REQUEST");
        assertThat(credit(id, "5", request, "topup")).asList().startsWith("invalid_id", "ACCOUNT");
        assertThat(credit(account, "5", id, "refund")).asList().startsWith("invalid_id", "REQUEST");
        assertThat(open(id, "5")).asList().startsWith("invalid_id", "ACCOUNT");
        int p = LAYOUT.partition(account);
        assertThat(server().command("EVALSHA", Scripts.digest(Scripts.Script.BALANCE), "2", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:" + id, id, MARKER)).asList().startsWith("invalid_id", "ACCOUNT");

        assertThat(state()).isEqualTo(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-1", "01", "1.0", "abc", "9223372036854775808", " 7"})
    @DisplayName("a malformed fencing token is refused before writing")
    void badToken(String token) {
        List<Object> before = state();
        assertThat(deduct(account, "5", request, token)).isEqualTo(List.of("invalid_argument", "token"));
        assertThat(state()).isEqualTo(before);
    }

    @Test
    @DisplayName("keys that do not match the ids, or span two partitions, are refused before writing")
    void inconsistentKeys() {
        List<Object> before = state();
        int p = LAYOUT.partition(account);
        int other = (p + 1) % LAYOUT.partitions();
        Object reply = server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:someone-else", LAYOUT.base(p) + ":req:" + account + ":" + request, LAYOUT.journal(p),
                account, "5", request, "-", "60000", MARKER);
        assertThat(reply).isEqualTo(List.of("invalid_argument", "keys"));
        reply = server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", LAYOUT.marker(p),
                LAYOUT.base(p) + ":acct:" + account, LAYOUT.base(p) + ":req:" + account + ":" + request, LAYOUT.journal(other),
                account, "5", request, "-", "60000", MARKER);
        assertThat(reply).isEqualTo(List.of("invalid_argument", "keys"));
        assertThat(state()).isEqualTo(before);
    }

    @Test
    @DisplayName("a fenced deduction refused as insufficient raises the fence mark and writes nothing else: a newer holder has been seen")
    void insufficientRaisesTheFence() {
        assertThat(first(deduct(account, "1", "r1-" + request, "5"))).isEqualTo("applied");
        String balance = (String) server().command("HGET", LAYOUT.accountKey(account), "balance");
        List<Object> journals = state().subList(2, state().size());

        assertThat(first(deduct(account, "999999999999", "r2-" + request, "7"))).isEqualTo("insufficient");

        assertThat(server().command("HGET", LAYOUT.accountKey(account), "fence")).isEqualTo("7");
        assertThat(server().command("HGET", LAYOUT.accountKey(account), "balance")).isEqualTo(balance);
        assertThat(state().subList(2, state().size())).as("no journal entry").isEqualTo(journals);
        assertThat(server().command("EXISTS", LAYOUT.requestKey(account, "r2-" + request))).as("no idempotency record").isEqualTo(0L);
        assertThat(deduct(account, "1", "r3-" + request, "6")).as("the holder it superseded is refused")
                .isEqualTo(List.of("stale_fence", "7"));
    }

    @Test
    @DisplayName("a token below the account's high-water mark is a stale fence; equal or higher passes and is recorded")
    void fence() {
        assertThat(first(deduct(account, "1", "r1-" + request, "18446744073"))).isEqualTo("applied");
        assertThat(server().command("HGET", LAYOUT.accountKey(account), "fence")).isEqualTo("18446744073");
        List<Object> before = state();

        assertThat(deduct(account, "1", "r2-" + request, "9999999999")).isEqualTo(List.of("stale_fence", "18446744073"));
        assertThat(state()).isEqualTo(before);

        assertThat(first(deduct(account, "1", "r3-" + request, "18446744073"))).isEqualTo("applied");
        assertThat(first(deduct(account, "1", "r4-" + request, "-"))).as("an unfenced deduction skips the fence").isEqualTo("applied");
        assertThat(first(deduct(account, "1", "r5-" + request, "9223372036854775807"))).isEqualTo("applied");
        assertThat(server().command("HGET", LAYOUT.accountKey(account), "fence")).isEqualTo("9223372036854775807");
    }

    @Test
    @DisplayName("a wrong retention, kind or marker value is refused before writing")
    void otherArguments() {
        List<Object> before = state();
        int p = LAYOUT.partition(account);
        String[] keys = {LAYOUT.marker(p), LAYOUT.accountKey(account), LAYOUT.requestKey(account, request), LAYOUT.journal(p)};
        assertThat(server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", keys[0], keys[1], keys[2],
                keys[3], account, "5", request, "-", "0", MARKER)).isEqualTo(List.of("invalid_argument", "retention"));
        assertThat(credit(account, "5", request, "deduct")).isEqualTo(List.of("invalid_argument", "kind"));
        assertThat(server().command("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", keys[0], keys[1], keys[2],
                keys[3], account, "5", request, "-", "60000", "warden-quota partitions=32"))
                .isEqualTo(List.of("marker_mismatch", MARKER));
        assertThat(state()).isEqualTo(before);
    }

    @Test
    @DisplayName("each script declares its flags in a Redis 7 shebang; only the reads (balance, balances) are no-writes")
    void shebangs() {
        for (Scripts.Script script : Scripts.Script.values()) {
            String firstLine = Scripts.source(script).lines().findFirst().orElseThrow();
            assertThat(firstLine).startsWith("#!lua flags=").doesNotContain("allow-oom");
            assertThat(firstLine.contains("no-writes"))
                    .isEqualTo(script == Scripts.Script.BALANCE || script == Scripts.Script.BALANCES);
        }
    }

    Object post(String acct, String request, String... lines) {
        int p = LAYOUT.partition(acct);
        List<String> args = new java.util.ArrayList<>(List.of("EVALSHA", Scripts.digest(Scripts.Script.POST), "6",
                LAYOUT.marker(p), LAYOUT.accountKey(acct), LAYOUT.balancesKey(acct), LAYOUT.requestKey(acct, request),
                LAYOUT.postingKey(acct, request), LAYOUT.journal(p), "post", acct, request, "60000", MARKER,
                Integer.toString(lines.length / 3)));
        args.addAll(List.of(lines));
        return server().command(args.toArray(String[]::new));
    }

    @Test
    @DisplayName("post.lua refuses bad names, order, signs, amounts and line counts on its own, before writing")
    void postRefusesBadInput() {
        String account = "posting-" + java.util.UUID.randomUUID();
        int p = LAYOUT.partition(account);
        server().command("SET", LAYOUT.marker(p), MARKER);
        server().command("HSET", LAYOUT.accountKey(account), "balance", "10");
        server().command("HSET", LAYOUT.balancesKey(account), "a-b", "5", "a_b", "5");
        Object journal = server().command("XLEN", LAYOUT.journal(p));

        assertThat(post(account, "r", "Plan", "+", "1")).isEqualTo(List.of("invalid_id", "BALANCE", "CHARACTER_NOT_ALLOWED"));
        assertThat(post(account, "r", "", "+", "1")).isEqualTo(List.of("invalid_id", "BALANCE", "EMPTY"));
        assertThat(post(account, "r", "x".repeat(33), "+", "1")).isEqualTo(List.of("invalid_id", "BALANCE", "TOO_LONG"));
        assertThat(post(account, "r", "a_b", "+", "1", "a-b", "+", "1")).isEqualTo(List.of("invalid_argument", "order"));
        assertThat(post(account, "r", "a-b", "+", "1", "a-b", "+", "1")).isEqualTo(List.of("invalid_argument", "order"));
        assertThat(post(account, "r", "a-b", "*", "1")).isEqualTo(List.of("invalid_argument", "sign"));
        assertThat(post(account, "r", "a-b", "-", "0")).isEqualTo(List.of("invalid_amount", "a-b", "ZERO"));
        assertThat(post(account, "r", "a-b", "-", "-1")).isEqualTo(List.of("invalid_amount", "a-b", "NEGATIVE"));
        assertThat(post(account, "r", "a-b", "-", "9007199254740992")).isEqualTo(List.of("invalid_amount", "a-b", "TOO_LARGE"));
        assertThat(post(account, "r")).isEqualTo(List.of("invalid_posting", "EMPTY"));
        String[] many = new String[3 * 17];
        for (int i = 0; i < 17; i++) {
            many[3 * i] = String.format("b%02d", i);
            many[3 * i + 1] = "+";
            many[3 * i + 2] = "1";
        }
        assertThat(post(account, "r", many)).isEqualTo(List.of("invalid_posting", "TOO_MANY_BALANCES"));
        assertThat(post(account, "r", "a-b", "-", "6", "a_b", "+", "1")).isEqualTo(List.of("insufficient", "a-b", "5"));
        assertThat(server().command("HGETALL", LAYOUT.balancesKey(account))).isEqualTo(List.of("a-b", "5", "a_b", "5"));
        assertThat(server().command("XLEN", LAYOUT.journal(p))).isEqualTo(journal);
        assertThat(server().command("EXISTS", LAYOUT.requestKey(account, "r"), LAYOUT.postingKey(account, "r"))).isEqualTo(0L);
    }
    Object holds(String op, String acct, String holdId, String amount, String expires) {
        int p = LAYOUT.partition(acct);
        return server().command("EVALSHA", Scripts.digest(Scripts.Script.HOLDS), "5", LAYOUT.marker(p),
                LAYOUT.base(p) + ":holds", LAYOUT.journal(p), LAYOUT.base(p) + ":acct:" + acct,
                LAYOUT.base(p) + ":hold:" + acct + ":" + holdId, op, "1000", "60000", MARKER, "16", acct, holdId, amount,
                expires);
    }

    @ParameterizedTest(name = "amount \"{0}\"")
    @MethodSource("badAmounts")
    @DisplayName("holds.lua refuses a bad amount to hold or capture on its own, before writing")
    void holdAmounts(String amount) {
        List<Object> before = state();
        assertThat((List<?>) holds("hold", account, "h", amount, "2000")).first().isEqualTo("invalid_amount");
        assertThat((List<?>) holds("capture", account, "h", amount, "")).first().isEqualTo("invalid_amount");
        assertThat(state()).isEqualTo(before);
    }

    @ParameterizedTest(name = "id #{index}")
    @MethodSource("badIds")
    @DisplayName("holds.lua refuses a bad hold id on its own, naming the field, before writing")
    void holdIds(String id) {
        List<Object> before = state();
        assertThat(((List<?>) holds("hold", account, id, "5", "2000")).subList(0, 2)).isEqualTo(List.of("invalid_id", "HOLD"));
        assertThat(((List<?>) holds("release", account, id, "", "")).subList(0, 2)).isEqualTo(List.of("invalid_id", "HOLD"));
        assertThat(state()).isEqualTo(before);
    }

    @Test
    @DisplayName("holds.lua refuses an unknown operation, a missing time or expiry, and keys that are not the ids', before writing")
    void holdArguments() {
        List<Object> before = state();
        int p = LAYOUT.partition(account);
        assertThat(holds("steal", account, "h", "5", "2000")).isEqualTo(List.of("invalid_argument", "op"));
        assertThat(holds("hold", account, "h", "5", "")).isEqualTo(List.of("invalid_argument", "expires"));
        assertThat(server().command("EVALSHA", Scripts.digest(Scripts.Script.HOLDS), "5", LAYOUT.marker(p),
                LAYOUT.base(p) + ":holds", LAYOUT.journal(p), LAYOUT.base(p) + ":acct:" + account,
                LAYOUT.base(p) + ":hold:" + account + ":other", "hold", "1000", "60000", MARKER, "16", account, "h", "5",
                "2000")).isEqualTo(List.of("invalid_argument", "keys"));
        assertThat(server().command("EVALSHA", Scripts.digest(Scripts.Script.HOLDS), "5", LAYOUT.marker(p),
                LAYOUT.base(p) + ":holds", LAYOUT.journal(p), LAYOUT.base(p) + ":acct:" + account,
                LAYOUT.base(p) + ":hold:" + account + ":h", "hold", "", "60000", MARKER, "16", account, "h", "5",
                "2000")).isEqualTo(List.of("invalid_argument", "now"));
        assertThat(state()).isEqualTo(before);
    }
}
