package dev.warden.quota;

import dev.warden.quota.internal.QuotaFactory;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.VirtualClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Authorisation holds against a real redis-server, timed by a virtual clock. */
class HoldsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final VirtualClock clock = new VirtualClock(T0);
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaFactory.create(settings(), new QuotaListener() {
        }, clock);
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    static Map<String, String> settings() {
        return ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.idempotency-retention", "10m"));
    }

    static String fresh(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static String opened(long balance) {
        String account = fresh("merchant");
        assertThat(quota.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    /** Everything a refused call must leave as it was: available, held, the hold record, the journal. */
    record State(String available, String held, Map<?, ?> hold, long journal) {
        static State of(String account, String holdId) {
            RedisServer server = redis.server();
            String key = LAYOUT.accountKey(account);
            List<?> hold = (List<?>) server.command("HGETALL", LAYOUT.holdKey(account, holdId));
            Map<Object, Object> fields = new java.util.TreeMap<>();
            for (int i = 0; i + 1 < hold.size(); i += 2) {
                fields.put(hold.get(i), hold.get(i + 1));
            }
            return new State((String) server.command("HGET", key, "balance"), (String) server.command("HGET", key, "held"),
                    fields, Journal.length(server, LAYOUT.journalOf(account)));
        }

        long availablePlusHeld() {
            return Long.parseLong(available) + (held == null ? 0 : Long.parseLong(held));
        }
    }

    static List<Journal.Entry> entries(String account) {
        return Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account)).toList();
    }

    @Nested
    @DisplayName("hold")
    class Hold {

        @Test
        @DisplayName("moves quota from available to held and journals it")
        void holds() {
            String account = opened(1_000);
            HoldOutcome outcome = quota.hold(account, 300, "h1", Duration.ofSeconds(30));

            HoldOutcome.Held held = (HoldOutcome.Held) outcome;
            assertThat(held.available()).isEqualTo(700);
            assertThat(held.held()).isEqualTo(300);
            assertThat(held.expiresAt()).isEqualTo(clock.instant().plusSeconds(30));
            assertThat(quota.balance(account)).hasValue(700);
            assertThat(State.of(account, "h1").held()).isEqualTo("300");
            assertThat(entries(account)).extracting(Journal.Entry::kind, Journal.Entry::amount, Journal.Entry::request)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("open", 1_000L, ""),
                            org.assertj.core.groups.Tuple.tuple("hold", 300L, "h1"));
        }

        @Test
        @DisplayName("more than available: INSUFFICIENT, nothing held")
        void insufficient() {
            String account = opened(100);
            State before = State.of(account, "h1");

            assertThat(quota.hold(account, 101, "h1", Duration.ofSeconds(30))).isEqualTo(new HoldOutcome.Insufficient(100));
            assertThat(State.of(account, "h1")).isEqualTo(before);
            assertThat(before.hold()).isEmpty();
        }

        @Test
        @DisplayName("again with the same id: DUPLICATE of the first; another amount: CONFLICT; nothing changes")
        void idempotent() {
            String account = opened(1_000);
            HoldOutcome first = quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            State after = State.of(account, "h1");

            assertThat(quota.hold(account, 300, "h1", Duration.ofSeconds(30))).isEqualTo(new HoldOutcome.Duplicate(first));
            assertThat(quota.hold(account, 200, "h1", Duration.ofSeconds(30))).isEqualTo(new HoldOutcome.Conflict(300));
            assertThat(State.of(account, "h1")).isEqualTo(after);
        }

        @Test
        @DisplayName("ids are per account: two accounts hold under one id independently")
        void perAccount() {
            String a = opened(1_000);
            String b = opened(1_000);
            assertThat(quota.hold(a, 10, "same", Duration.ofSeconds(30))).isInstanceOf(HoldOutcome.Held.class);
            assertThat(quota.hold(b, 20, "same", Duration.ofSeconds(30))).isInstanceOf(HoldOutcome.Held.class);
        }

        @Test
        @DisplayName("an account that does not exist: ACCOUNT_NOT_FOUND")
        void noAccount() {
            String neighbour = opened(1); // its partition has a marker, so a missing account is not DATA_LOST
            String account = fresh("nobody");
            while (LAYOUT.partition(account) != LAYOUT.partition(neighbour)) {
                account = fresh("nobody");
            }
            assertThat(quota.hold(account, 1, "h", Duration.ofSeconds(1))).isEqualTo(new HoldOutcome.AccountNotFound(account));
            assertThat(quota.release(account, "h")).isEqualTo(new HoldOutcome.AccountNotFound(account));
        }
    }

    @Nested
    @DisplayName("capture")
    class Capture {

        @Test
        @DisplayName("deducts what was used and returns the rest, journaled as a capture and a release")
        void partial() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));

            HoldOutcome.Captured captured = (HoldOutcome.Captured) quota.capture(account, "h1", 200);
            assertThat(captured.captured()).isEqualTo(200);
            assertThat(captured.returned()).isEqualTo(100);
            assertThat(captured.available()).isEqualTo(800);
            State state = State.of(account, "h1");
            assertThat(state.available()).isEqualTo("800");
            assertThat(state.held()).isEqualTo("0");
            assertThat(entries(account)).extracting(Journal.Entry::kind, Journal.Entry::amount, Journal.Entry::balance)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("open", 1_000L, 1_000L),
                            org.assertj.core.groups.Tuple.tuple("hold", 300L, 700L),
                            org.assertj.core.groups.Tuple.tuple("capture", 200L, 700L),
                            org.assertj.core.groups.Tuple.tuple("release", 100L, 800L));
        }

        @Test
        @DisplayName("more than held: EXCEEDS_HOLD, nothing changes")
        void moreThanHeld() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            State before = State.of(account, "h1");

            assertThat(quota.capture(account, "h1", 301)).isEqualTo(new HoldOutcome.ExceedsHold(300));
            assertThat(State.of(account, "h1")).isEqualTo(before);
        }

        @Test
        @DisplayName("twice: the second is DUPLICATE and the balance changed once; another amount: ALREADY_CAPTURED")
        void twice() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            HoldOutcome first = quota.capture(account, "h1", 300);
            State after = State.of(account, "h1");

            assertThat(quota.capture(account, "h1", 300)).isEqualTo(new HoldOutcome.Duplicate(first));
            assertThat(quota.capture(account, "h1", 100)).isEqualTo(new HoldOutcome.AlreadyCaptured(300));
            assertThat(State.of(account, "h1")).isEqualTo(after);
            assertThat(after.available()).isEqualTo("700");
            assertThat(entries(account)).filteredOn(e -> e.kind().equals("capture")).hasSize(1);
        }

        @Test
        @DisplayName("of a voided hold: ALREADY_RELEASED; of an unknown one: UNKNOWN_HOLD")
        void afterRelease() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            quota.release(account, "h1");
            State before = State.of(account, "h1");

            assertThat(quota.capture(account, "h1", 300)).isEqualTo(new HoldOutcome.AlreadyReleased(300));
            assertThat(quota.capture(account, "nope", 1)).isEqualTo(new HoldOutcome.UnknownHold("nope"));
            assertThat(State.of(account, "h1")).isEqualTo(before);
        }
    }

    @Nested
    @DisplayName("release")
    class Release {

        @Test
        @DisplayName("returns all of it; again: DUPLICATE")
        void releases() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));

            HoldOutcome first = quota.release(account, "h1");
            assertThat(first).isEqualTo(new HoldOutcome.Released(300, 1_000, ((HoldOutcome.Released) first).entryId()));
            State after = State.of(account, "h1");
            assertThat(quota.release(account, "h1")).isEqualTo(new HoldOutcome.Duplicate(first));
            assertThat(State.of(account, "h1")).isEqualTo(after);
            assertThat(after.available()).isEqualTo("1000");
            assertThat(after.held()).isEqualTo("0");
        }

        @Test
        @DisplayName("after a capture: ALREADY_CAPTURED, nothing changes")
        void afterCapture() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            quota.capture(account, "h1", 250);
            State before = State.of(account, "h1");

            assertThat(quota.release(account, "h1")).isEqualTo(new HoldOutcome.AlreadyCaptured(250));
            assertThat(State.of(account, "h1")).isEqualTo(before);
        }
    }

    @Nested
    @DisplayName("expiry (virtual clock)")
    class Expiry {

        @Test
        @DisplayName("a capture after the expiry: EXPIRED, the hold returned to available, journaled as expire")
        void captureAfterExpiry() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(30));
            clock.advance(Duration.ofSeconds(29));
            assertThat(State.of(account, "h1").held()).isEqualTo("300");
            clock.advance(Duration.ofSeconds(1));

            assertThat(quota.capture(account, "h1", 100)).isEqualTo(new HoldOutcome.Expired(300));
            assertThat(quota.release(account, "h1")).isEqualTo(new HoldOutcome.Expired(300));
            State state = State.of(account, "h1");
            assertThat(state.available()).isEqualTo("1000");
            assertThat(state.held()).isEqualTo("0");
            assertThat(entries(account)).extracting(Journal.Entry::kind).containsExactly("open", "hold", "expire");
        }

        @Test
        @DisplayName("any hold call in the partition returns what is due, without a sweep")
        void onTouch() {
            String account = opened(1_000);
            quota.hold(account, 300, "h1", Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(11));

            HoldOutcome.Held held = (HoldOutcome.Held) quota.hold(account, 50, "h2", Duration.ofSeconds(10));
            assertThat(held.available()).isEqualTo(950);
            assertThat(held.held()).isEqualTo(50);
        }

        @Test
        @DisplayName("expireHolds() returns every due hold of every partition, and only those")
        void sweep() {
            quota.expireHolds(); // what earlier tests left due
            List<String> accounts = List.of(opened(1_000), opened(1_000), opened(1_000));
            for (String a : accounts) {
                quota.hold(a, 100, "short", Duration.ofSeconds(5));
                quota.hold(a, 100, "long", Duration.ofHours(1));
            }
            clock.advance(Duration.ofSeconds(6));

            assertThat(quota.expireHolds()).isEqualTo(3);
            assertThat(quota.expireHolds()).isZero();
            for (String a : accounts) {
                State s = State.of(a, "long");
                assertThat(s.available()).isEqualTo("900");
                assertThat(s.held()).isEqualTo("100");
            }
        }

        @Test
        @DisplayName("a due hold whose account is gone leaves the index and keeps its record for the retention only, never for good")
        void orphanedHoldGetsALifetime() {
            String account = opened(1_000);
            quota.hold(account, 100, "orphan", Duration.ofSeconds(5));
            redis.server().command("DEL", LAYOUT.accountKey(account)); // gone (by hand, or a partial loss)
            clock.advance(Duration.ofSeconds(6));
            quota.expireHolds();
            String record = LAYOUT.holdKey(account, "orphan");
            long ttl = Long.parseLong(String.valueOf(redis.server().command("PTTL", record)));
            assertThat(ttl).as("the record's lifetime").isPositive().isLessThanOrEqualTo(Duration.ofMinutes(10).toMillis());
            assertThat(redis.server().command("ZSCORE", LAYOUT.holdIndex(LAYOUT.partition(account)), account + ":orphan")).isNull();
        }

        @Test
        @DisplayName("racing a capture, exactly one wins, and available + held stays whole")
        void racingCapture() throws Exception {
            // Two engines whose clocks straddle the expiry, as two JVMs may: the capture's says the hold is
            // open, the other's says it is due. Whichever script runs first decides.
            VirtualClock late = new VirtualClock(clock.instant().plusSeconds(60));
            int rounds = 200;
            int captures = 0;
            int expiries = 0;
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try (QuotaService other = QuotaFactory.create(settings(), new QuotaListener() {
            }, late)) {
                other.expireHolds(); // what other tests left open is due on this clock: out of the way first
                for (int round = 0; round < rounds; round++) {
                    String account = opened(1_000);
                    quota.hold(account, 100, "h", Duration.ofSeconds(30));
                    boolean viaSweep = round % 2 == 0;
                    CyclicBarrier start = new CyclicBarrier(2);
                    Future<HoldOutcome> capture = pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return quota.capture(account, "h", 60);
                    });
                    Future<Object> expiry = pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return viaSweep ? (Object) other.expireHolds() : other.release(account, "h");
                    });
                    HoldOutcome captured = capture.get(30, TimeUnit.SECONDS);
                    Object expired = expiry.get(30, TimeUnit.SECONDS);

                    State state = State.of(account, "h");
                    List<String> kinds = entries(account).stream().map(Journal.Entry::kind).toList();
                    if (captured instanceof HoldOutcome.Captured) {
                        captures++;
                        assertThat(expired).isIn(0L, new HoldOutcome.AlreadyCaptured(60));
                        assertThat(state.availablePlusHeld()).isEqualTo(940);
                        assertThat(kinds).containsExactly("open", "hold", "capture", "release");
                    } else {
                        expiries++;
                        assertThat(captured).isEqualTo(new HoldOutcome.Expired(100));
                        assertThat(expired).isIn(1L, new HoldOutcome.Expired(100));
                        assertThat(state.availablePlusHeld()).isEqualTo(1_000);
                        assertThat(kinds).containsExactly("open", "hold", "expire");
                    }
                    assertThat(state.held()).isEqualTo("0");
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(captures + expiries).isEqualTo(rounds);
            System.out.printf("holds race: %d captures won, %d expiries won%n", captures, expiries);
        }
    }

    @Nested
    @DisplayName("bad input")
    class BadInput {

        @Test
        @DisplayName("a negative or zero amount: INVALID_AMOUNT before anything is sent")
        void amounts() {
            String account = opened(1_000);
            State before = State.of(account, "h1");
            assertThat(quota.hold(account, -5, "h1", Duration.ofSeconds(30)))
                    .isEqualTo(new HoldOutcome.InvalidAmount(AmountProblem.NEGATIVE));
            assertThat(quota.hold(account, 0, "h1", Duration.ofSeconds(30)))
                    .isEqualTo(new HoldOutcome.InvalidAmount(AmountProblem.ZERO));
            assertThat(quota.hold(account, Amount.MAX + 1, "h1", Duration.ofSeconds(30)))
                    .isEqualTo(new HoldOutcome.InvalidAmount(AmountProblem.TOO_LARGE));
            quota.hold(account, 10, "h1", Duration.ofSeconds(30));
            State held = State.of(account, "h1");
            assertThat(quota.capture(account, "h1", -1)).isEqualTo(new HoldOutcome.InvalidAmount(AmountProblem.NEGATIVE));
            assertThat(State.of(account, "h1")).isEqualTo(held);
            assertThat(before.journal() + 1).isEqualTo(held.journal());
        }

        @Test
        @DisplayName("a blank or reserved id: InvalidIdException naming the field; null: NullPointerException naming it")
        void ids() {
            String account = opened(1_000);
            InvalidIdException blank = catchThrowableOfType(
                    () -> quota.hold(account, 1, "", Duration.ofSeconds(1)), InvalidIdException.class);
            assertThat(blank.field()).isEqualTo(InvalidIdException.Field.HOLD);
            assertThat(blank.problem()).isEqualTo(InvalidIdException.Problem.EMPTY);
            InvalidIdException reserved = catchThrowableOfType(
                    () -> quota.capture(account, "a:b", 1), InvalidIdException.class);
            assertThat(reserved.field()).isEqualTo(InvalidIdException.Field.HOLD);
            assertThat(reserved.problem()).isEqualTo(InvalidIdException.Problem.RESERVED_CHARACTER);
            assertThat(catchThrowableOfType(() -> quota.release("", "h"), InvalidIdException.class).field())
                    .isEqualTo(InvalidIdException.Field.ACCOUNT);
            assertThatThrownBy(() -> quota.release(account, null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("holdId");
            assertThatThrownBy(() -> quota.hold(null, 1, "h", Duration.ofSeconds(1))).isInstanceOf(NullPointerException.class)
                    .hasMessage("account");
        }

        @Test
        @DisplayName("an expiry that is null, zero, negative or under 1 ms is refused before anything is sent")
        void expiries() {
            String account = opened(1_000);
            State before = State.of(account, "h");
            assertThatThrownBy(() -> quota.hold(account, 1, "h", null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("expiry");
            for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-1), Duration.ofNanos(999_999))) {
                assertThatThrownBy(() -> quota.hold(account, 1, "h", bad)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("at least 1 ms");
            }
            assertThat(State.of(account, "h")).isEqualTo(before);
        }
    }
}
