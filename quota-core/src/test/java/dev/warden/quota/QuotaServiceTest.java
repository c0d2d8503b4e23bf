package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The service against a real redis-server: outcomes, idempotency, journal, and bad input. */
class QuotaServiceTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.idempotency-retention", "10m")));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    static String fresh(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static String opened(long balance) {
        String account = fresh("merchant");
        assertThat(quota.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    /** What a bad call must leave untouched: the balance, the journal, and the request record. */
    record Snapshot(String balance, long journal, Object record) {
        static Snapshot of(String account, String requestId) {
            RedisServer server = redis.server();
            return new Snapshot(Journal.balanceField(server, LAYOUT.accountKey(account)),
                    Journal.length(server, LAYOUT.journalOf(account)),
                    server.command("EXISTS", LAYOUT.requestKey(account, requestId)));
        }
    }

    @Nested
    @DisplayName("deduct")
    class Deduct {

        @Test
        @DisplayName("applies, journals the entry and remembers the request id for the retention")
        void applies() {
            String account = opened(1_000);
            String request = fresh("order");

            Outcome outcome = quota.deduct(account, 300, request);

            assertThat(outcome).isInstanceOf(Outcome.Applied.class);
            Outcome.Applied applied = (Outcome.Applied) outcome;
            assertThat(applied.balance()).isEqualTo(700);
            assertThat(quota.balance(account)).hasValue(700);
            List<Journal.Entry> entries = Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                    .filter(e -> e.account().equals(account)).toList();
            assertThat(entries).extracting(Journal.Entry::kind).containsExactly("open", "deduct");
            assertThat(entries.get(1)).isEqualTo(new Journal.Entry(applied.entryId(), account, "deduct", 300, request, 700, "-"));
            long pttl = (Long) redis.server().command("PTTL", LAYOUT.requestKey(account, request));
            assertThat(pttl).isBetween(1L, Duration.ofMinutes(10).toMillis());
        }

        @Test
        @DisplayName("a repeated request id answers the original outcome and deducts once")
        void duplicate() {
            String account = opened(1_000);
            String request = fresh("order");
            Outcome.Applied first = (Outcome.Applied) quota.deduct(account, 300, request);
            quota.deduct(account, 100, fresh("order"));

            Outcome again = quota.deduct(account, 300, request);

            assertThat(again).isEqualTo(new Outcome.Duplicate(first));
            assertThat(again.isApplied()).isTrue();
            assertThat(quota.balance(account)).hasValue(600);
        }

        @Test
        @DisplayName("a request id reused on the same account with another amount or kind is a conflict and changes nothing")
        void conflicts() {
            String account = opened(1_000);
            String request = fresh("order");
            quota.deduct(account, 300, request);
            Snapshot before = Snapshot.of(account, request);

            assertThat(quota.deduct(account, 301, request)).isEqualTo(new Outcome.Conflict(EntryKind.DEDUCT, account, 300));
            assertThat(quota.topUp(account, 300, request)).isEqualTo(new Outcome.Conflict(EntryKind.DEDUCT, account, 300));
            assertThat(quota.refund(account, 300, request)).isEqualTo(new Outcome.Conflict(EntryKind.DEDUCT, account, 300));

            assertThat(Snapshot.of(account, request)).isEqualTo(before);
        }

        @Test
        @DisplayName("request ids are unique per account: another account's use of the same id, in the same partition or another, is applied")
        void perAccount() {
            String account = opened(1_000);
            String neighbour = openedInPartitionOf(account);
            String elsewhere = openedOutsidePartitionOf(account);
            String request = fresh("order");

            Outcome first = quota.deduct(account, 300, request);
            Outcome second = quota.deduct(neighbour, 300, request);
            Outcome third = quota.deduct(elsewhere, 200, request);

            assertThat(first).isInstanceOf(Outcome.Applied.class);
            assertThat(((Outcome.Applied) second).balance()).isEqualTo(700);
            assertThat(((Outcome.Applied) third).balance()).isEqualTo(800);
            assertThat(quota.deduct(neighbour, 300, request)).as("a true replay is still a duplicate")
                    .isEqualTo(new Outcome.Duplicate((Outcome.Applied) second));
            assertThat(quota.deduct(elsewhere, 200, request)).isEqualTo(new Outcome.Duplicate((Outcome.Applied) third));
            assertThat(quota.balance(account)).hasValue(700);
            assertThat(quota.balance(neighbour)).hasValue(700);
            assertThat(quota.balance(elsewhere)).hasValue(800);
        }

        @Test
        @DisplayName("insufficient balance changes nothing and does not burn the request id")
        void insufficient() {
            String account = opened(100);
            String request = fresh("order");
            Snapshot before = Snapshot.of(account, request);

            assertThat(quota.deduct(account, 101, request)).isEqualTo(new Outcome.Insufficient(100));

            assertThat(Snapshot.of(account, request)).isEqualTo(before);
            Outcome retried = quota.deduct(account, 100, request);
            assertThat(retried).isInstanceOf(Outcome.Applied.class);
            assertThat(((Outcome.Applied) retried).balance()).isZero();
        }

        @Test
        @DisplayName("deducts down to exactly zero, never below")
        void toZero() {
            String account = opened(10);
            assertThat(quota.deduct(account, 10, fresh("o"))).extracting(o -> ((Outcome.Applied) o).balance()).isEqualTo(0L);
            assertThat(quota.deduct(account, 1, fresh("o"))).isEqualTo(new Outcome.Insufficient(0));
        }

        @Test
        @DisplayName("an unknown account in a partition that has its marker is 'account not found'")
        void unknownAccount() {
            String known = opened(10);
            String unknown = inPartitionOf(known);
            String request = fresh("order");

            assertThat(quota.deduct(unknown, 5, request)).isEqualTo(new Outcome.AccountNotFound(unknown));
            assertThat(quota.topUp(unknown, 5, request)).isEqualTo(new Outcome.AccountNotFound(unknown));
            assertThat(quota.balance(unknown)).isEmpty();
            assertThat(redis.server().command("EXISTS", LAYOUT.accountKey(unknown))).isEqualTo(0L);
            assertThat(redis.server().command("EXISTS", LAYOUT.requestKey(unknown, request))).isEqualTo(0L);
        }

        @Test
        @DisplayName("async and batch forms give the same typed outcomes")
        void asyncAndBatch() throws Exception {
            String a = opened(100);
            String b = opened(5);
            String request = fresh("order");

            Outcome async = quota.deductAsync(a, 10, request).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(async).isInstanceOf(Outcome.Applied.class);

            List<Outcome> outcomes = quota.deductAll(List.of(
                    new Deduction(a, 20, fresh("order")),
                    new Deduction(a, 10, request),
                    new Deduction(b, 6, fresh("order")),
                    new Deduction(b, 0, fresh("order")),
                    new Deduction(inPartitionOf(a), 1, fresh("order")),
                    new Deduction(b, 5, fresh("order"))));

            assertThat(outcomes).hasSize(6);
            assertThat(outcomes.get(0)).isEqualTo(new Outcome.Applied(70, ((Outcome.Applied) outcomes.get(0)).entryId()));
            assertThat(outcomes.get(1)).isEqualTo(new Outcome.Duplicate((Outcome.Applied) async));
            assertThat(outcomes.get(2)).isEqualTo(new Outcome.Insufficient(5));
            assertThat(outcomes.get(3)).isEqualTo(new Outcome.InvalidAmount(AmountProblem.ZERO));
            assertThat(outcomes.get(4)).isInstanceOf(Outcome.AccountNotFound.class);
            assertThat(outcomes.get(5)).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.balance(a)).hasValue(70);
            assertThat(quota.balance(b)).hasValue(0);
            assertThat(quota.deductAll(List.of())).isEmpty();
        }
    }

    @Nested
    @DisplayName("open, top up, refund")
    class Credits {

        @Test
        void openTwiceIsAccountExists() {
            String account = opened(50);
            assertThat(quota.open(account, 999)).isEqualTo(new Outcome.AccountExists(50));
            assertThat(quota.balance(account)).hasValue(50);
        }

        @Test
        void openWithZeroThenTopUpAndRefund() {
            String account = fresh("merchant");
            assertThat(quota.open(account, 0)).isInstanceOf(Outcome.Applied.class);
            String topUp = fresh("topup");
            Outcome.Applied t = (Outcome.Applied) quota.topUp(account, 500, topUp);
            assertThat(t.balance()).isEqualTo(500);
            assertThat(quota.topUp(account, 500, topUp)).isEqualTo(new Outcome.Duplicate(t));
            quota.deduct(account, 200, fresh("order"));
            Outcome.Applied r = (Outcome.Applied) quota.refund(account, 50, fresh("refund"));
            assertThat(r.balance()).isEqualTo(350);
            assertThat(Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                    .filter(e -> e.account().equals(account)).map(Journal.Entry::kind))
                    .containsExactly("open", "topup", "deduct", "refund");
        }

        @Test
        @DisplayName("a top-up that would take the balance past 2^53-1 is refused")
        void balanceOverflow() {
            String account = opened(Amount.MAX - 10);
            String request = fresh("topup");
            Snapshot before = Snapshot.of(account, request);
            assertThat(quota.topUp(account, 11, request)).isEqualTo(new Outcome.InvalidAmount(AmountProblem.BALANCE_OVERFLOW));
            assertThat(Snapshot.of(account, request)).isEqualTo(before);
            Outcome applied = quota.topUp(account, 10, request);
            assertThat(applied).isInstanceOf(Outcome.Applied.class);
            assertThat(((Outcome.Applied) applied).balance()).isEqualTo(Amount.MAX);
            assertThat(quota.balance(account)).hasValue(Amount.MAX);
        }
    }

    @Nested
    @DisplayName("bad input gets a typed error and changes nothing")
    class BadInput {

        @ParameterizedTest(name = "amount {0}")
        @ValueSource(longs = {0, -1, -100, Long.MIN_VALUE, 9007199254740992L, Long.MAX_VALUE})
        void amountsOutOfRangeAreInvalidAndNothingIsSent(long amount) {
            String account = opened(1_000);
            String request = fresh("order");
            Snapshot before = Snapshot.of(account, request);

            assertThat(quota.deduct(account, amount, request)).isInstanceOf(Outcome.InvalidAmount.class);
            assertThat(quota.topUp(account, amount, request)).isInstanceOf(Outcome.InvalidAmount.class);
            assertThat(quota.refund(account, amount, request)).isInstanceOf(Outcome.InvalidAmount.class);
            assertThat(quota.deductAll(List.of(new Deduction(account, amount, request))).get(0))
                    .isInstanceOf(Outcome.InvalidAmount.class);
            assertThat(quota.charge(account, request, balance -> amount)).isInstanceOf(Outcome.InvalidAmount.class);

            assertThat(Snapshot.of(account, request)).isEqualTo(before);
        }

        @Test
        void openRefusesNegativeAndTooLargeQuota() {
            String account = fresh("merchant");
            assertThat(quota.open(account, -1)).isEqualTo(new Outcome.InvalidAmount(AmountProblem.NEGATIVE));
            assertThat(quota.open(account, Amount.MAX + 1)).isEqualTo(new Outcome.InvalidAmount(AmountProblem.TOO_LARGE));
            assertThat(redis.server().command("EXISTS", LAYOUT.accountKey(account))).isEqualTo(0L);
        }

        static Stream<Arguments> badIds() {
            return Stream.of(
                    Arguments.of("", InvalidIdException.Problem.EMPTY),
                    Arguments.of("a".repeat(129), InvalidIdException.Problem.TOO_LONG),
                    Arguments.of("\u00e9".repeat(65), InvalidIdException.Problem.TOO_LONG), // 130 bytes, 65 chars
                    Arguments.of("a\u0000b", InvalidIdException.Problem.CONTROL_CHARACTER),
                    Arguments.of("a\nb", InvalidIdException.Problem.CONTROL_CHARACTER),
                    Arguments.of("a\u007fb", InvalidIdException.Problem.CONTROL_CHARACTER),
                    Arguments.of("a\u0085b", InvalidIdException.Problem.CONTROL_CHARACTER), // NEL, a C1 control
                    Arguments.of("a\u009fb", InvalidIdException.Problem.CONTROL_CHARACTER),
                    Arguments.of("a:b", InvalidIdException.Problem.RESERVED_CHARACTER),
                    Arguments.of("{p1}", InvalidIdException.Problem.RESERVED_CHARACTER),
                    Arguments.of("a}b", InvalidIdException.Problem.RESERVED_CHARACTER),
                    Arguments.of("a\ud800b", InvalidIdException.Problem.MALFORMED));
        }

        @ParameterizedTest(name = "account id {1}")
        @MethodSource("badIds")
        void badAccountIds(String id, InvalidIdException.Problem problem) {
            String good = fresh("order");
            List<Consumer<String>> calls = List.of(
                    a -> quota.open(a, 10),
                    a -> quota.topUp(a, 10, good),
                    a -> quota.refund(a, 10, good),
                    a -> quota.deduct(a, 10, good),
                    a -> quota.deductAsync(a, 10, good),
                    a -> quota.deductAll(List.of(new Deduction(a, 10, good))),
                    a -> quota.balance(a),
                    a -> quota.charge(a, good, b -> 1),
                    a -> quota.lockName(a));
            for (Consumer<String> call : calls) {
                InvalidIdException e = catchThrowableOfType(InvalidIdException.class, () -> call.accept(id));
                assertThat(e).as("refused").isNotNull();
                assertThat(e.field()).isEqualTo(InvalidIdException.Field.ACCOUNT);
                assertThat(e.problem()).isEqualTo(problem);
            }
        }

        @ParameterizedTest(name = "request id {1}")
        @MethodSource("badIds")
        void badRequestIds(String id, InvalidIdException.Problem problem) {
            String account = opened(1_000);
            Snapshot before = Snapshot.of(account, "x");
            List<Consumer<String>> calls = List.of(
                    r -> quota.topUp(account, 10, r),
                    r -> quota.refund(account, 10, r),
                    r -> quota.deduct(account, 10, r),
                    r -> quota.deductAsync(account, 10, r),
                    r -> quota.deductAll(List.of(new Deduction(account, 1, fresh("ok")), new Deduction(account, 10, r))),
                    r -> quota.charge(account, r, b -> 1));
            for (Consumer<String> call : calls) {
                InvalidIdException e = catchThrowableOfType(InvalidIdException.class, () -> call.accept(id));
                assertThat(e).as("refused").isNotNull();
                assertThat(e.field()).isEqualTo(InvalidIdException.Field.REQUEST);
                assertThat(e.problem()).isEqualTo(problem);
            }
            assertThat(Snapshot.of(account, "x")).as("the valid half of the batch was not sent either").isEqualTo(before);
        }

        @Test
        void idsAtTheLimitsAreAccepted() {
            String account = "m".repeat(QuotaService.MAX_ID_BYTES - 2) + "\u00e9"; // 128 bytes
            assertThat(quota.open(account, 10)).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.deduct(account, 1, "r".repeat(128))).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.deduct(account, 1, "\u5546\u6237-\u8ba2\u5355 \ud83d\udcb3")).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.balance(account)).isEqualTo(OptionalLong.of(8));
        }

        @Test
        void nullsAreNullPointers() {
            assertThatThrownBy(() -> quota.deduct(null, 1, "r")).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> quota.deduct("a", 1, null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> quota.deduct("a", 1, "r", null)).isInstanceOf(NullPointerException.class);
        }
    }

    @Test
    @DisplayName("a closed service refuses calls")
    void closed() {
        QuotaService other = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
        other.close();
        other.close();
        assertThat(catchThrowableOfType(QuotaException.class, () -> other.deduct("a", 1, "r")).reason())
                .isEqualTo(QuotaException.Reason.CLOSED);
    }

    // ---- helpers ----

    /** An unopened account id in the same partition as {@code account}. */
    static String inPartitionOf(String account) {
        int partition = LAYOUT.partition(account);
        while (true) {
            String candidate = fresh("merchant");
            if (LAYOUT.partition(candidate) == partition) {
                return candidate;
            }
        }
    }

    static String openedInPartitionOf(String account) {
        String neighbour = inPartitionOf(account);
        quota.open(neighbour, 1_000);
        return neighbour;
    }

    static String openedOutsidePartitionOf(String account) {
        while (true) {
            String candidate = fresh("merchant");
            if (LAYOUT.partition(candidate) != LAYOUT.partition(account)) {
                quota.open(candidate, 1_000);
                return candidate;
            }
        }
    }

}
