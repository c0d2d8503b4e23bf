package dev.warden.quota.ledger;

import dev.warden.quota.redis.KeyLayout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * The money path as its documentation states it, in plain Java: what every public call answers, what
 * Redis holds, what the journal carries and what the ledger holds once it has consumed it. The
 * checker ({@link MoneyPathCheckTest}) runs each step on the real system and on this model and compares.
 *
 * <p>It follows docs/quota.md, docs/ledger.md and the Javadoc, not the scripts: idempotency per (account, request id)
 * within the retention, and per bucket of a split account (a retry crossing a split may apply again);
 * a retry after the retention is applied again by Redis and compensated by the ledger, a refused
 * compensation is reported, never silent; holds end once; postings all or nothing; a split account's
 * total is exact for one caller; after Redis lost its data the ledger's figures come back, open holds,
 * named balances and fence marks included, and what was not yet persisted is lost. Where the documented
 * contract leaves a choice (a hold on a split account sees bucket 0 only) the model accepts every
 * documented answer and follows the one given.
 *
 * <p>Answers are compared as text: a status and figures, {@code ?} where the contract leaves a figure
 * open (a split account's bucket balance).
 */
final class MoneyModel {

    static final long MAX_AMOUNT = 9_007_199_254_740_991L;

    /** One account's figures, on one side (Redis or the ledger). */
    static final class Account {
        long available;
        long held;
        long fence = -1;
        /** Open named balances; in the ledger, those with a row. */
        final SortedMap<String, Long> named = new TreeMap<>();
        /** The split count (1: not split); Redis only. */
        int buckets = 1;
        /** Whether it was ever split: its entries then depend on moves between buckets, which the model leaves out. */
        boolean everSplit;

        Account copy() {
            Account a = new Account();
            a.available = available;
            a.held = held;
            a.fence = fence;
            a.named.putAll(named);
            a.buckets = buckets;
            a.everSplit = everSplit;
            return a;
        }
    }

    /** An idempotency record, where it lives (the bucket of a split account, 0 otherwise). */
    record Record(String kind, long amount, long balanceAfter, boolean split, SortedMap<String, Long> lines,
                  SortedMap<String, Long> after) {
    }

    record RecordKey(String account, String requestId, int bucket) {
    }

    /** A hold's record in Redis. */
    static final class Hold {
        String state = "held";
        long amount;
        long expires;
        long captured;
        long returned;
        /** Available and held right after the hold (its duplicate answers them), -1 when unknown. */
        long heldAvailable = -1;
        long heldHeld = -1;
        long endAvailable = -1;
        /** The record outlives its end by the retention only. */
        boolean ended() {
            return !state.equals("held");
        }
    }

    /** One journal entry, as the model knows it. */
    static final class Event {
        final long seq;
        final int partition;
        final String account;
        final String kind;
        final long amount;
        /** The ledger's key: the request id, '' for an opening, '<kind>:<hold id>' for a hold's entries. */
        final String key;
        final long available;
        final long held;
        final SortedMap<String, Long> lines;
        final long token;
        /** For a hold: its id and expiry (bootstrap restores open holds). */
        String holdId;
        long expires;
        /** The stream entry id, when the call answered it (a compensation's request id is derived from it). */
        String entryId;
        boolean persisted;
        /** Read by a consumer (which may have died): no longer new in the stream. */
        boolean delivered;
        /** Persisted as a replay whose compensation in Redis has not been made yet. */
        boolean compensationOwed;

        Event(long seq, int partition, String account, String kind, long amount, String key, long available, long held,
              SortedMap<String, Long> lines, long token) {
            this.seq = seq;
            this.partition = partition;
            this.account = account;
            this.kind = kind;
            this.amount = amount;
            this.key = key;
            this.available = available;
            this.held = held;
            this.lines = lines;
            this.token = token;
        }

        @Override
        public String toString() {
            return kind + " " + account + " " + amount + " '" + key + "' p" + partition + (persisted ? " persisted" : "");
        }
    }

    record HoldKey(String account, String holdId) {
    }

    final KeyLayout layout;
    /** Redis: accounts, records, holds. */
    final Map<String, Account> redis = new TreeMap<>();
    final Map<RecordKey, Record> records = new HashMap<>();
    final Map<HoldKey, Hold> holds = new HashMap<>();
    /** The journal, in order of appending; persisted entries stay (their keys are the ledger's). */
    final List<Event> journal = new ArrayList<>();
    /** The ledger: accounts (with the named balances it has rows for), keys, open holds. */
    final Map<String, Account> ledger = new TreeMap<>();
    final Set<List<String>> ledgerKeys = new HashSet<>();
    final Map<HoldKey, long[]> ledgerHolds = new LinkedHashMap<>();
    /** Accounts with something a person must look at (quarantine, a refused compensation): reconciliation is never clean. */
    final Set<String> flagged = new HashSet<>();
    /** Redis lost its data and bootstrap has not run yet. */
    boolean lost;
    /**
     * Partitions with their marker: written by the first opening there, a split's buckets there, or
     * bootstrap (every partition); a call on a partition without one answers DATA_LOST.
     */
    final Set<Integer> markers = new HashSet<>();
    long now;
    private long seq;

    MoneyModel(KeyLayout layout, long now) {
        this.layout = layout;
        this.now = now;
    }

    // ---- routing (documented: bucket CRC-32("route:" + request id) mod N; bucket i in partition (home + i) mod P) ----

    static int route(String requestId, int buckets) {
        CRC32 crc = new CRC32();
        crc.update(("route:" + requestId).getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % buckets);
    }

    int home(String account) {
        return layout.partition(account);
    }

    private int bucketOf(Account a, String requestId) {
        return a.buckets > 1 ? route(requestId, a.buckets) : 0;
    }

    private int partitionOf(String account, int bucket) {
        return layout.bucketPartition(account, bucket);
    }

    // ---- answers ----

    static String fig(long v) {
        return Long.toString(v);
    }

    /** A figure the contract leaves open for a split account (its bucket's balance). */
    private static String fig(long v, Account a) {
        return a.buckets > 1 ? "?" : Long.toString(v);
    }

    private String lostAnswer() {
        return "EXCEPTION DATA_LOST";
    }

    // ---- the engine's operations ----

    String open(String account, long amount) {
        Account a = redis.get(account);
        if (a != null) {
            return "ACCOUNT_EXISTS " + a.available;
        }
        a = new Account();
        a.available = amount;
        redis.put(account, a);
        markers.add(home(account));
        append(home(account), account, "open", amount, "", 0, 0, new TreeMap<>(), -1);
        return "APPLIED " + amount;
    }

    /** A deduction, top-up or refund; {@code token} -1 when unfenced. {@link #lastEvent} is its entry, when applied. */
    String change(String kind, String account, long amount, String requestId, long token) {
        lastEvent = null;
        if (amount <= 0) {
            return amount == 0 ? "INVALID_AMOUNT ZERO" : "INVALID_AMOUNT NEGATIVE";
        }
        if (amount > MAX_AMOUNT) {
            return "INVALID_AMOUNT TOO_LARGE";
        }
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Account a = redis.get(account);
        if (a == null) {
            // The unsplit script: record first, then the account.
            Record r = records.get(new RecordKey(account, requestId, 0));
            if (r != null) {
                return recorded(r, kind, account, amount);
            }
            return "ACCOUNT_NOT_FOUND";
        }
        int bucket = bucketOf(a, requestId);
        Record r = records.get(new RecordKey(account, requestId, bucket));
        if (r != null) {
            return recorded(r, kind, account, amount);
        }
        if (token >= 0) {
            if (a.fence >= 0 && token < a.fence) {
                return "STALE_FENCE " + token + " " + a.fence;
            }
            a.fence = Math.max(a.fence, token);
        }
        long delta;
        if (kind.equals("deduct")) {
            if (a.available < amount) {
                return "INSUFFICIENT " + fig(a.available, a);
            }
            delta = -amount;
        } else {
            delta = amount;
        }
        a.available += delta;
        Event e = append(partitionOf(account, bucket), account, kind, amount, requestId, delta, 0, new TreeMap<>(),
                kind.equals("deduct") ? token : -1);
        records.put(new RecordKey(account, requestId, bucket), new Record(kind, amount, a.available, a.buckets > 1,
                null, null));
        lastEvent = e;
        return "APPLIED " + fig(a.available, a);
    }

    /** The event the last applied change appended (the checker gives it the entry id the call answered). */
    Event lastEvent;

    private static String recorded(Record r, String kind, String account, long amount) {
        if (r.kind.equals(kind) && r.amount == amount) {
            return "DUPLICATE " + (r.split ? "?" : fig(r.balanceAfter));
        }
        return "CONFLICT " + r.kind + " " + r.amount;
    }

    /** {@code charge} without a lock: the recorded answer of its request id, else price the balance and deduct. */
    String charge(String account, String requestId, java.util.function.LongUnaryOperator pricing) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        Record r = records.get(new RecordKey(account, requestId, bucketOf(a, requestId)));
        if (r != null) {
            // A retry of a charge: its first answer, whatever the price would be now.
            if (r.kind.equals("deduct")) {
                return "DUPLICATE " + (r.split ? "?" : fig(r.balanceAfter));
            }
            return "CONFLICT " + r.kind + " " + r.amount;
        }
        long price = pricing.applyAsLong(a.available);
        return change("deduct", account, price, requestId, -1);
    }

    OptionalAnswer balance(String account) {
        if (!markers.contains(home(account))) {
            return new OptionalAnswer(lostAnswer());
        }
        Account a = redis.get(account);
        return new OptionalAnswer(a == null ? "NONE" : "BALANCE " + a.available);
    }

    record OptionalAnswer(String text) {
    }

    // ---- holds (the engine's clock is the model's 'now') ----

    /** Expires every due hold of the partition, as the hold script's sweep does before its own work. */
    private void sweep(int partition) {
        List<Map.Entry<HoldKey, Hold>> due = new ArrayList<>();
        for (Map.Entry<HoldKey, Hold> e : holds.entrySet()) {
            if (e.getValue().state.equals("held") && e.getValue().expires <= now && home(e.getKey().account()) == partition) {
                due.add(e);
            }
        }
        due.sort((x, y) -> x.getValue().expires != y.getValue().expires ? Long.compare(x.getValue().expires, y.getValue().expires)
                : (x.getKey().account() + ":" + x.getKey().holdId()).compareTo(y.getKey().account() + ":" + y.getKey().holdId()));
        for (Map.Entry<HoldKey, Hold> e : due) {
            end(e.getKey(), e.getValue(), "expired", 0);
        }
    }

    private void end(HoldKey key, Hold h, String state, long captured) {
        Account a = redis.get(key.account());
        long rest = h.amount - captured;
        a.held -= h.amount;
        a.available += rest;
        if (captured > 0) {
            append(home(key.account()), key.account(), "capture", captured, "capture:" + key.holdId(), 0, -captured,
                    new TreeMap<>(), -1);
        }
        if (rest > 0) {
            String kind = state.equals("expired") ? "expire" : "release";
            append(home(key.account()), key.account(), kind, rest, kind + ":" + key.holdId(), rest, -rest,
                    new TreeMap<>(), -1);
        }
        h.state = state;
        h.captured = captured;
        h.returned = rest;
        h.endAvailable = a.available;
    }

    long expireHolds() {
        long before = holds.values().stream().filter(h -> h.state.equals("expired")).count();
        for (int p = 0; p < layout.partitions(); p++) {
            if (markers.contains(p)) {
                sweep(p);
            }
        }
        return holds.values().stream().filter(h -> h.state.equals("expired")).count() - before;
    }

    /**
     * A hold. On a split account it sees bucket 0's available quota only, which the contract does not fix:
     * {@code actual} (the real answer) decides between the two documented answers.
     */
    String hold(String account, long amount, String holdId, long expiryMs, String actual) {
        if (amount <= 0) {
            return amount == 0 ? "INVALID_AMOUNT ZERO" : "INVALID_AMOUNT NEGATIVE";
        }
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        sweep(home(account));
        HoldKey key = new HoldKey(account, holdId);
        Hold h = holds.get(key);
        if (h != null) {
            if (h.amount == amount && h.state.equals("held")) {
                return "DUPLICATE HELD " + known(h.heldAvailable) + " " + known(h.heldHeld);
            }
            if (h.amount == amount) {
                return "DUPLICATE HELD ? ?";
            }
            return "CONFLICT " + h.amount;
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        boolean mayBeShort = a.buckets > 1 && actual.startsWith("INSUFFICIENT");
        if (a.available < amount || mayBeShort) {
            return a.available < amount ? "INSUFFICIENT " + fig(a.available, a) : actual;
        }
        a.available -= amount;
        a.held += amount;
        h = new Hold();
        h.amount = amount;
        h.expires = now + expiryMs;
        h.heldAvailable = a.buckets > 1 ? -1 : a.available;
        h.heldHeld = a.held;
        holds.put(key, h);
        Event e = append(home(account), account, "hold", amount, "hold:" + holdId, -amount, amount, new TreeMap<>(), -1);
        e.holdId = holdId;
        e.expires = h.expires;
        return "HELD " + fig(a.available, a) + " " + a.held;
    }

    private static String known(long v) {
        return v < 0 ? "?" : Long.toString(v);
    }

    String capture(String account, String holdId, long amount) {
        if (amount <= 0) {
            return amount == 0 ? "INVALID_AMOUNT ZERO" : "INVALID_AMOUNT NEGATIVE";
        }
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        sweep(home(account));
        HoldKey key = new HoldKey(account, holdId);
        Hold h = holds.get(key);
        if (h == null) {
            return redis.containsKey(account) ? "UNKNOWN_HOLD" : "ACCOUNT_NOT_FOUND";
        }
        switch (h.state) {
            case "expired":
                return "EXPIRED " + h.returned;
            case "captured":
                if (h.captured == amount) {
                    return "DUPLICATE CAPTURED " + h.captured + " " + h.returned + " " + known(h.endAvailable);
                }
                return "ALREADY_CAPTURED " + h.captured;
            case "released":
                return "ALREADY_RELEASED " + h.returned;
            default:
                break;
        }
        if (amount > h.amount) {
            return "EXCEEDS_HOLD " + h.amount;
        }
        Account a = redis.get(account);
        end(key, h, "captured", amount);
        h.endAvailable = a.buckets > 1 ? -1 : a.available;
        return "CAPTURED " + amount + " " + h.returned + " " + fig(a.available, a);
    }

    String release(String account, String holdId) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        sweep(home(account));
        HoldKey key = new HoldKey(account, holdId);
        Hold h = holds.get(key);
        if (h == null) {
            return redis.containsKey(account) ? "UNKNOWN_HOLD" : "ACCOUNT_NOT_FOUND";
        }
        switch (h.state) {
            case "expired":
                return "EXPIRED " + h.returned;
            case "captured":
                return "ALREADY_CAPTURED " + h.captured;
            case "released":
                return "DUPLICATE RELEASED " + h.returned + " " + known(h.endAvailable);
            default:
                break;
        }
        Account a = redis.get(account);
        end(key, h, "released", 0);
        h.endAvailable = a.buckets > 1 ? -1 : a.available;
        return "RELEASED " + h.returned + " " + fig(a.available, a);
    }

    /** {@code chargeHold} without a lock: price what the hold still holds (while held and not due), then capture. */
    String chargeHold(String account, String holdId, java.util.function.LongUnaryOperator pricing) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Hold h = holds.get(new HoldKey(account, holdId));
        if (h == null) {
            return redis.containsKey(account) ? "UNKNOWN_HOLD" : "ACCOUNT_NOT_FOUND";
        }
        long amount = switch (h.state) {
            case "held" -> now >= h.expires ? h.amount : pricing.applyAsLong(h.amount);
            case "captured" -> h.captured;
            default -> h.amount;
        };
        return capture(account, holdId, amount);
    }

    // ---- named balances ----

    String openBalance(String account, String name) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (a.named.containsKey(name)) {
            return "BALANCE_EXISTS " + name + " " + a.named.get(name);
        }
        a.named.put(name, 0L);
        return "OPENED " + name;
    }

    String post(String account, String requestId, SortedMap<String, Long> lines) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Record r = records.get(new RecordKey(account, requestId, 0));
        if (r != null) {
            if (r.kind.equals("post") && r.lines.equals(lines)) {
                return "DUPLICATE " + r.after;
            }
            return "CONFLICT " + r.kind;
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        for (Map.Entry<String, Long> line : lines.entrySet()) {
            Long current = a.named.get(line.getKey());
            if (current == null) {
                return "UNKNOWN_BALANCE " + line.getKey();
            }
            if (line.getValue() < 0 && current < -line.getValue()) {
                return "INSUFFICIENT " + line.getKey() + " " + current;
            }
        }
        SortedMap<String, Long> after = new TreeMap<>();
        for (Map.Entry<String, Long> line : lines.entrySet()) {
            long v = a.named.get(line.getKey()) + line.getValue();
            a.named.put(line.getKey(), v);
            after.put(line.getKey(), v);
        }
        append(home(account), account, "post", 0, requestId, 0, 0, new TreeMap<>(lines), -1);
        records.put(new RecordKey(account, requestId, 0), new Record("post", 0, 0, false, new TreeMap<>(lines), after));
        return "POSTED " + after;
    }

    // ---- split accounts ----

    String split(String account, int n) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (a.buckets > 1) {
            return "ALREADY_SPLIT " + a.buckets;
        }
        a.buckets = n;
        a.everSplit = true;
        for (int i = 1; i < n; i++) {
            markers.add(partitionOf(account, i));
        }
        return "SPLIT " + n;
    }

    String merge(String account) {
        if (!markers.contains(home(account))) {
            return lostAnswer();
        }
        Account a = redis.get(account);
        if (a == null) {
            return "ACCOUNT_NOT_FOUND";
        }
        if (a.buckets <= 1) {
            return "NOT_SPLIT";
        }
        int n = a.buckets;
        a.buckets = 1;
        return "MERGED " + n;
    }

    // ---- time and faults ----

    /** The idempotency retention passes: every record of an ended change expires; open holds keep theirs. */
    void retentionPasses() {
        records.clear();
        holds.values().removeIf(Hold::ended);
    }

    /** Redis restarted empty. */
    void dataLoss() {
        redis.clear();
        records.clear();
        holds.clear();
        markers.clear();
        // What the ledger had not persisted is gone with Redis.
        journal.removeIf(e -> !e.persisted);
        lost = true;
    }

    /** {@code bootstrap}: Redis gets the ledger's accounts back, with their held quota, open holds, named balances and fences. */
    void bootstrap() {
        for (int p = 0; p < layout.partitions(); p++) {
            markers.add(p);
        }
        if (!lost) {
            return;
        }
        for (Map.Entry<String, Account> e : ledger.entrySet()) {
            Account a = e.getValue().copy();
            a.buckets = 1;
            redis.put(e.getKey(), a);
        }
        for (Map.Entry<HoldKey, long[]> e : ledgerHolds.entrySet()) {
            Hold h = new Hold();
            h.amount = e.getValue()[0];
            h.expires = e.getValue()[1];
            holds.put(e.getKey(), h);
        }
        lost = false;
        // Replays the ledger applied and had not yet undone in Redis: their compensations are owed still.
        for (Event e : List.copyOf(journal)) {
            if (e.compensationOwed) {
                compensate(e);
            }
        }
    }

    // ---- the journal and the ledger ----

    private Event append(int partition, String account, String kind, long amount, String key, long available, long held,
                         SortedMap<String, Long> lines, long token) {
        Event e = new Event(seq++, partition, account, kind, amount, key, available, held, lines, token);
        journal.add(e);
        return e;
    }

    /** Whether any entry of these partitions is not yet persisted (or persisted and owing its compensation). */
    boolean backlog(Set<Integer> partitions) {
        for (Event e : journal) {
            if (partitions.contains(e.partition) && (!e.persisted || e.compensationOwed)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Consumers drain these partitions: each entry in journal order, then the compensations of replays in
     * Redis (which journal entries of their own, drained too when they land in these partitions).
     */
    Set<String> drain(Set<Integer> partitions) {
        Set<String> uncertain = racing(partitions);
        while (true) {
            Event next = null;
            for (Event e : journal) {
                if (partitions.contains(e.partition) && (!e.persisted || e.compensationOwed)) {
                    next = e;
                    break;
                }
            }
            if (next == null) {
                return uncertain;
            }
            if (!next.persisted) {
                persist(next);
            }
            if (next.compensationOwed) {
                compensate(next);
            }
        }
    }

    /**
     * Accounts for which this drain's order is not the model's to say: two unpersisted entries with one ledger
     * key (a request id a split account applied in two buckets: a retry, or another kind of change reusing
     * the id, across a split) in two of the drained partitions. The consumers take the streams in any order,
     * and the first the ledger sees is applied, the second compensated (refused when the money is spent: then
     * reported). Either way is the documented contract; the checker reads which one happened.
     */
    private Set<String> racing(Set<Integer> partitions) {
        Map<List<String>, Set<Integer>> where = new HashMap<>();
        for (Event e : journal) {
            if (partitions.contains(e.partition) && !e.persisted && !e.key.isEmpty()) {
                where.computeIfAbsent(List.of(e.account, e.key), k -> new HashSet<>()).add(e.partition);
            }
        }
        Set<String> uncertain = new java.util.TreeSet<>();
        where.forEach((key, ps) -> {
            if (ps.size() > 1) {
                uncertain.add(key.get(0));
            }
        });
        return uncertain;
    }

    /** The checker read an account's figures after an order the model could not say: the model takes them. */
    void learn(String account, Account inRedis, Account inLedger, boolean needsAPerson) {
        Account r = redis.get(account);
        if (r != null && inRedis != null) {
            r.available = inRedis.available;
            r.held = inRedis.held;
            r.named.clear();
            r.named.putAll(inRedis.named);
        }
        if (inLedger == null) {
            ledger.remove(account);
        } else {
            Account l = ledger.computeIfAbsent(account, k -> new Account());
            l.available = inLedger.available;
            l.held = inLedger.held;
            l.named.clear();
            l.named.putAll(inLedger.named);
        }
        if (needsAPerson) {
            flagged.add(account);
        } else {
            flagged.remove(account);
        }
    }

    /** A consumer commits these entries and dies before compensating or acknowledging. */
    void persistOnly(List<Event> events) {
        for (Event e : events) {
            if (!e.persisted) {
                persist(e);
            }
        }
    }

    /** A consumer reads what is new in a partition (and dies, or freezes, before acknowledging): those entries. */
    List<Event> deliver(int partition) {
        List<Event> out = new ArrayList<>();
        for (Event e : journal) {
            if (e.partition == partition && !e.persisted && !e.delivered) {
                e.delivered = true;
                out.add(e);
            }
        }
        return out;
    }

    private void persist(Event e) {
        e.persisted = true;
        List<String> key = List.of(e.account, e.key);
        if (ledgerKeys.contains(key)) {
            if (e.kind.equals("deduct") || e.kind.equals("topup") || e.kind.equals("refund")) {
                if (!fits(e)) {
                    flagged.add(e.account); // the ledger's CHECK refuses it: quarantined
                    return;
                }
                apply(e); // applied as Redis did, then undone in Redis by a compensation
                e.compensationOwed = true;
            } else {
                flagged.add(e.account); // a posting, a hold's entry or an opening again: quarantined
            }
            return;
        }
        Account a = ledger.get(e.account);
        if (e.kind.equals("open")) {
            if (a == null) {
                a = new Account();
                ledger.put(e.account, a);
            }
            a.available += e.amount;
            ledgerKeys.add(key);
            return;
        }
        if (a == null) {
            if (e.partition == home(e.account)) {
                flagged.add(e.account); // the account is unknown: quarantined
                return;
            }
            // A bucket's entry in another partition, consumed before the opening: the row starts at 0.
            a = new Account();
            ledger.put(e.account, a);
        }
        if (!fits(e)) {
            flagged.add(e.account); // the ledger's CHECK refuses it: quarantined
            return;
        }
        apply(e);
        ledgerKeys.add(key);
        HoldKey hk = e.holdId != null ? new HoldKey(e.account, e.holdId) : null;
        if (e.kind.equals("hold")) {
            ledgerHolds.put(hk, new long[]{e.amount, e.expires});
        } else if (e.kind.equals("capture") || e.kind.equals("release") || e.kind.equals("expire")) {
            ledgerHolds.remove(new HoldKey(e.account, e.key.substring(e.key.indexOf(':') + 1)));
        }
    }

    /**
     * Whether the ledger's CHECKs (nothing below zero) accept the entry. For an account that was ever split the
     * model cannot tell (its entries depend on moves between buckets, which it leaves out) and the ledger never
     * refuses one (each bucket's stream is non-negative on its own, so any interleaving of them is; migration V5).
     */
    private boolean fits(Event e) {
        Account r = redis.get(e.account);
        if (r != null && r.everSplit) {
            return true;
        }
        Account trial = ledger.getOrDefault(e.account, new Account()).copy();
        applyTo(trial, e);
        return trial.available >= 0 && trial.held >= 0 && trial.named.values().stream().allMatch(v -> v >= 0);
    }

    private void apply(Event e) {
        applyTo(ledger.computeIfAbsent(e.account, k -> new Account()), e);
    }

    private static void applyTo(Account a, Event e) {
        a.available += e.available;
        a.held += e.held;
        for (Map.Entry<String, Long> line : e.lines.entrySet()) {
            a.named.merge(line.getKey(), line.getValue(), Long::sum);
        }
        if (e.token >= 0) {
            a.fence = Math.max(a.fence, e.token);
        }
    }

    /** The ledger undoes a replay in Redis under a request id derived from its entry; a refusal is reported. */
    private void compensate(Event e) {
        e.compensationOwed = false;
        String requestId = "ledger-comp-" + e.partition + "-" + e.entryId;
        String kind = e.kind.equals("deduct") ? "refund" : "deduct";
        String answer = change(kind, e.account, e.amount, requestId, -1);
        if (!answer.startsWith("APPLIED") && !answer.startsWith("DUPLICATE")) {
            flagged.add(e.account);
        }
    }

    /** Accounts whose every figure the model fixes on both sides (none of the ledger's refusals touched them). */
    Set<String> exact() {
        Set<String> out = new java.util.TreeSet<>(redis.keySet());
        out.addAll(ledger.keySet());
        out.removeAll(flagged);
        return out;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("model: now=" + now + (lost ? " LOST" : "") + " flagged=" + flagged + "\n");
        redis.forEach((k, a) -> b.append("  redis ").append(k).append(": ").append(a.available).append('/').append(a.held)
                .append(" fence ").append(a.fence).append(" named ").append(a.named).append(" buckets ").append(a.buckets).append('\n'));
        ledger.forEach((k, a) -> b.append("  ledger ").append(k).append(": ").append(a.available).append('/').append(a.held)
                .append(" fence ").append(a.fence).append(" named ").append(a.named).append('\n'));
        for (Iterator<Event> it = journal.iterator(); it.hasNext(); ) {
            Event e = it.next();
            if (!e.persisted || e.compensationOwed) {
                b.append("  unpersisted ").append(e).append('\n');
            }
        }
        return b.toString();
    }

    static boolean equalFigures(Account x, Account y) {
        return x.available == y.available && x.held == y.held && Objects.equals(x.named, y.named);
    }
}
