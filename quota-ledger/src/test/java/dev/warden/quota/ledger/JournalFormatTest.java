package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;
import dev.warden.quota.internal.Scripts;
import dev.warden.quota.ledger.internal.journal.LedgerScripts;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.redis.internal.RedisScript;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal's format is declared once ({@link JournalEntry}) and every script writes what it declares. */
class JournalFormatTest {

    @Test
    @DisplayName("every XADD of every quota and ledger script writes only declared fields, and every declared field is written somewhere")
    void scriptsWriteTheDeclaredFields() {
        List<RedisScript> scripts = new ArrayList<>(Scripts.all());
        scripts.addAll(LedgerScripts.ALL);
        Set<String> written = new TreeSet<>();
        int calls = 0;
        for (RedisScript script : scripts) {
            for (List<String> args : xadds(script.source())) {
                calls++;
                assertThat(args.get(1)).as("%s: XADD id", script.name()).isEqualTo("'*'");
                for (int i = 2; i < args.size(); i += 2) {
                    String field = args.get(i);
                    assertThat(field).as("%s: a field name is a literal", script.name()).matches("'[a-z]+'");
                    String name = field.substring(1, field.length() - 1);
                    assertThat(JournalEntry.FIELDS).as("%s writes '%s'", script.name(), name).contains(name);
                    written.add(name);
                }
                assertThat(args.size() % 2).as("%s: field/value pairs", script.name()).isZero();
            }
        }
        assertThat(calls).as("XADD calls found").isGreaterThanOrEqualTo(9);
        assertThat(written).containsExactlyInAnyOrderElementsOf(JournalEntry.FIELDS);
    }

    @Test
    @DisplayName("decode: every kind as the scripts write it, keyed as the ledger keys it")
    void decodesEveryKind() {
        assertThat(decode("open", "100", "", "100", "-")).satisfies(e -> {
            assertThat(e.requestId()).isEmpty();
            assertThat(e.delta()).isZero();
        });
        assertThat(decode("deduct", "30", "r1", "70", "7")).satisfies(e -> {
            assertThat(e.requestId()).isEqualTo("r1");
            assertThat(e.token()).isEqualTo(OptionalLong.of(7));
            assertThat(e.delta()).isEqualTo(-30);
        });
        assertThat(decode("hold", "30", "h1", "70", "-").requestId()).isEqualTo("hold:h1");
        assertThat(decode("moveout", "5", "mv-1", "65", "-").requestId()).isEqualTo("moveout:mv-1");
        Map<String, String> post = fields("post", "0", "p1", "70", "-");
        post.put(JournalEntry.LINES, "coupons=+5,points=-2");
        assertThat(JournalEntry.decode(0, "s", "1-1", post).lines()).containsEntry("coupons", 5L).containsEntry("points", -2L);
    }

    @Test
    @DisplayName("decode refuses what no script writes, saying what is wrong")
    void refusesMalformed() {
        Map<String, String> missing = fields("deduct", "30", "r1", "70", "-");
        missing.remove(JournalEntry.BALANCE);
        assertThatThrownBy(() -> JournalEntry.decode(0, "s", "1-1", missing)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'balance' is missing");
        assertThatThrownBy(() -> decode("deduct", "0", "r1", "70", "-")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> decode("deduct", "3", "r1", "-1", "-")).hasMessageContaining("negative balance");
        assertThatThrownBy(() -> decode("levy", "3", "r1", "1", "-")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decode("deduct", "3", "a:b", "1", "-")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decode("deduct", "3", "r1", "1", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decode("post", "0", "p1", "1", "-")).hasMessageContaining("without lines");
    }

    @Test
    @DisplayName("what each kind does: available, held, and their sum (what reconciliation compares)")
    void effects() {
        for (EntryKind kind : EntryKind.values()) {
            assertThat(JournalEntry.totalDelta(kind, 10))
                    .isEqualTo(JournalEntry.availableDelta(kind, 10) + JournalEntry.heldDelta(kind, 10));
        }
        assertThat(JournalEntry.totalDelta(EntryKind.HOLD, 10)).isZero();
        assertThat(JournalEntry.totalDelta(EntryKind.RELEASE, 10)).isZero();
        assertThat(JournalEntry.totalDelta(EntryKind.CAPTURE, 10)).isEqualTo(-10);
        assertThat(JournalEntry.availableDelta(EntryKind.MOVEIN, 10)).isEqualTo(10);
        assertThat(JournalEntry.expires(Map.of(JournalEntry.EXPIRES, "1796083200000"))).hasValue(1796083200000L);
        assertThat(JournalEntry.expires(Map.of(JournalEntry.EXPIRES, "soon"))).isEmpty();
    }

    private static JournalEntry decode(String kind, String amount, String request, String balance, String token) {
        return JournalEntry.decode(3, "quota:{p3}:journal", "1-1", fields(kind, amount, request, balance, token));
    }

    private static Map<String, String> fields(String kind, String amount, String request, String balance, String token) {
        Map<String, String> f = new HashMap<>(Map.of(JournalEntry.ACCOUNT, "acct", JournalEntry.KIND, kind,
                JournalEntry.AMOUNT, amount, JournalEntry.BALANCE, balance, JournalEntry.TOKEN, token));
        if (!request.isEmpty()) {
            f.put(JournalEntry.REQUEST, request);
        }
        return f;
    }

    /** The top-level arguments of each {@code redis.call('XADD', ...)} in a script, as source text. */
    private static List<List<String>> xadds(String source) {
        List<List<String>> calls = new ArrayList<>();
        int at = 0;
        while ((at = source.indexOf("redis.call('XADD'", at)) >= 0) {
            int open = source.indexOf('(', at);
            List<String> args = new ArrayList<>();
            StringBuilder arg = new StringBuilder();
            int depth = 0;
            boolean quoted = false;
            int i = open + 1;
            for (; i < source.length(); i++) {
                char ch = source.charAt(i);
                if (quoted) {
                    quoted = ch != '\'';
                } else if (ch == '\'') {
                    quoted = true;
                } else if (ch == '(') {
                    depth++;
                } else if (ch == ')') {
                    if (depth == 0) {
                        break;
                    }
                    depth--;
                } else if (ch == ',' && depth == 0) {
                    args.add(arg.toString().trim());
                    arg.setLength(0);
                    continue;
                }
                arg.append(ch);
            }
            args.add(arg.toString().trim());
            calls.add(args.subList(1, args.size())); // without 'XADD' itself: key, id, field, value, ...
            at = i;
        }
        return calls;
    }
}
