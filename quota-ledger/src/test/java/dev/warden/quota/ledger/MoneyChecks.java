package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The invariants of the money path, checked against the real Redis and database of a {@link MoneySystem}:
 * nothing is ever below zero; once the consumers have drained, Redis and the ledger equal the model;
 * reconciliation is clean exactly when nothing needs a person, reports drift only where the two sides
 * differ, and its repair refuses to run out of order and never reverses an acknowledged change; every
 * key in Redis is of a kind docs/quota.md's memory table accounts for, with the lifetime it states.
 */
final class MoneyChecks {

    private final MoneySystem system;
    private final MoneyModel model;

    MoneyChecks(MoneySystem system) {
        this.system = system;
        this.model = system.model;
    }

    /** Cheap enough for every step: no figure below zero in Redis. */
    void afterEveryStep() {
        for (String key : keys()) {
            if (key.contains(":acct:") || key.contains(":bkt:") || key.contains(":bal:")) {
                List<?> fields = (List<?>) system.redis.command("HGETALL", key);
                for (int i = 0; i + 1 < fields.size(); i += 2) {
                    String name = String.valueOf(fields.get(i));
                    String value = String.valueOf(fields.get(i + 1));
                    if ((key.contains(":bal:") || name.equals("balance") || name.equals("held")) && value.startsWith("-")) {
                        fail("Redis holds a negative figure: " + key + " " + name + " = " + value);
                    }
                }
            }
        }
    }

    /** After the last step: recover if Redis lost its data, settle moves, drain, then compare everything. */
    void atTheEnd() {
        if (model.lost) {
            system.run(new MoneyStep.Bootstrap());
        }
        for (Map.Entry<String, MoneyModel.Account> e : List.copyOf(model.redis.entrySet())) {
            if (e.getValue().buckets > 1) {
                system.run(new MoneyStep.Balance(e.getKey())); // completes the moves in flight
            }
        }
        system.run(new MoneyStep.Drain(system.allPartitions()));
        compareRedis();
        compareLedger();
        reconciliation(false);
        reconciliation(true);
        compareRedis(); // the repair changed nothing the model knows
        memory();
    }

    /** Redis against the model: every account, its available total, held, named balances and fence. */
    void compareRedis() {
        QuotaService quota = system.quota();
        Set<String> inRedis = new TreeSet<>();
        for (String key : keys()) {
            String account = system.layout.accountOf(key);
            if (account != null) {
                inRedis.add(account);
            }
        }
        if (!inRedis.equals(model.redis.keySet())) {
            fail("Redis holds accounts " + inRedis + ", the model " + model.redis.keySet());
        }
        for (Map.Entry<String, MoneyModel.Account> e : model.redis.entrySet()) {
            String a = e.getKey();
            MoneyModel.Account m = e.getValue();
            OptionalLong balance = quota.balance(a);
            long held = number(system.redis.command("HGET", system.layout.accountKey(a), "held"), 0);
            long fence = number(system.redis.command("HGET", system.layout.accountKey(a), "fence"), -1);
            Optional<SortedMap<String, Long>> named = quota.balances(a);
            if (balance.isEmpty() || balance.getAsLong() != m.available || held != m.held || fence != m.fence
                    || named.isEmpty() || !named.get().equals(m.named)) {
                fail("Redis account " + a + ": available " + balance + ", held " + held + ", fence " + fence + ", named "
                        + named + "; the model: " + m.available + ", " + m.held + ", " + m.fence + ", " + m.named);
            }
        }
    }

    /** The ledger against the model, for every account no refusal touched (those are reconciliation's to report). */
    void compareLedger() {
        Map<String, long[]> accounts = new TreeMap<>();
        Map<String, SortedMap<String, Long>> named = new TreeMap<>();
        try (Connection c = system.database.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT account, balance, held FROM ledger_accounts");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    accounts.put(rs.getString(1), new long[]{rs.getLong(2), rs.getLong(3)});
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT account, name, amount FROM ledger_balances");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    named.computeIfAbsent(rs.getString(1), k -> new TreeMap<>()).put(rs.getString(2), rs.getLong(3));
                }
            }
        } catch (SQLException e) {
            throw new AssertionError("could not read the ledger", e);
        }
        for (String a : model.exact()) {
            MoneyModel.Account m = model.ledger.get(a);
            long[] row = accounts.get(a);
            if ((m == null) != (row == null)) {
                fail("the ledger " + (row == null ? "lacks" : "holds") + " account " + a + "; the model "
                        + (m == null ? "has no such account" : "holds " + m.available + "/" + m.held));
            }
            if (m == null) {
                continue;
            }
            SortedMap<String, Long> rows = named.getOrDefault(a, new TreeMap<>());
            if (row[0] != m.available || row[1] != m.held || !withoutZeros(rows).equals(withoutZeros(m.named))) {
                fail("ledger account " + a + ": " + row[0] + "/" + row[1] + " named " + rows + "; the model " + m.available
                        + "/" + m.held + " named " + m.named);
            }
            MoneyModel.Account r = model.redis.get(a);
            if (r != null && (r.available != m.available || r.held != m.held
                    || !withoutZeros(r.named).equals(withoutZeros(m.named)))) {
                fail("the model itself: drained, yet its Redis and ledger differ for " + a);
            }
        }
        for (long[] row : accounts.values()) {
            if (row[0] < 0 || row[1] < 0) {
                fail("the ledger holds a negative figure");
            }
        }
    }

    private static SortedMap<String, Long> withoutZeros(SortedMap<String, Long> m) {
        SortedMap<String, Long> out = new TreeMap<>(m);
        out.values().removeIf(v -> v == 0);
        return out;
    }

    /**
     * Reconciliation is clean exactly when nothing needs a person (no refusal, no lost data awaiting
     * bootstrap), and drifts only where that is so; repair refuses to run then, and otherwise has nothing to do.
     */
    void reconciliation(boolean repair) {
        // Redis lost what the ledger holds: the model's accounts, or an account whose only persisted entries are moves
        // between its buckets (which the model leaves out).
        boolean dataMissing = model.lost && (!model.ledger.isEmpty() || ledgerHoldsAccounts());
        boolean expectClean = model.flagged.isEmpty() && !dataMissing;
        if (!repair) {
            ReconciliationReport report = system.reconciler().check();
            // A merged account's last moves in flight on its former buckets' streams show as drift "in flight": the
            // comparison reads the account's own stream only. That is all a clean expectation tolerates.
            boolean onlyInFlight = report.unresolvedQuarantine() == 0 && report.unresolvedCompensations() == 0
                    && report.drifted().stream().allMatch(this::mergedInFlight);
            if (report.clean() != expectClean && !(expectClean && onlyInFlight)) {
                fail("reconciliation says clean=" + report.clean() + ", the model " + expectClean + " (flagged "
                        + model.flagged + ", data missing " + dataMissing + "): " + report);
            }
            for (ReconciliationReport.Drift d : report.drifted()) {
                if (!model.flagged.contains(d.account()) && !dataMissing && !mergedInFlight(d)) {
                    fail("reconciliation reports drift for " + d.account() + ", whose figures agree: " + report);
                }
            }
            return;
        }
        try {
            RepairReport report = system.reconciler().repair(true);
            if (!expectClean) {
                fail("repair ran although " + (dataMissing ? "Redis lost its data and bootstrap has not run"
                        : "entries of " + model.flagged + " need a person") + ": " + report);
            }
            if (report.repairsTotal() != 0) {
                fail("repair rewrote accounts whose figures agree: " + report.repairs());
            }
        } catch (QuotaException e) {
            if (expectClean || e.reason() != QuotaException.Reason.RECOVERY_ORDER) {
                fail("repair refused (" + e.reason() + ": " + e.getMessage() + "); the model expected it to "
                        + (expectClean ? "run" : "refuse with RECOVERY_ORDER"));
            }
        }
    }

    private boolean mergedInFlight(ReconciliationReport.Drift d) {
        MoneyModel.Account a = model.redis.get(d.account());
        return !d.drained() && a != null && a.everSplit && a.buckets <= 1;
    }

    private boolean ledgerHoldsAccounts() {
        try (Connection c = system.database.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT COUNT(*) FROM ledger_accounts"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1) > 0;
        } catch (SQLException e) {
            throw new AssertionError("could not read the ledger", e);
        }
    }

    /** Every key is of a kind the memory table accounts for, with its stated lifetime. */
    void memory() {
        String quota = system.layout.prefix() + "quota:";
        for (String key : keys()) {
            long ttl = number(system.redis.command("PTTL", key), -1);
            String kind = key.startsWith(quota + "ledger:") ? "ledger" : kindOf(key.substring(key.indexOf('}') + 2));
            switch (kind) {
                case "marker", "journal", "acct", "bal", "holds", "ledger" -> {
                }
                case "req", "post" -> require(ttl > 0, key, "an idempotency record without a lifetime");
                case "hold" -> {
                    String state = String.valueOf(system.redis.command("HGET", key, "state"));
                    require(state.equals("held") ? ttl < 0 : ttl > 0, key, "a hold record " + state + " with TTL " + ttl);
                }
                case "bkt" -> {
                    String rest = key.substring(key.indexOf(":bkt:") + 5);
                    String account = rest.substring(0, rest.lastIndexOf(':'));
                    int index = Integer.parseInt(rest.substring(rest.lastIndexOf(':') + 1));
                    MoneyModel.Account a = model.redis.get(account);
                    require(a != null && index < a.buckets, key, "a bucket of an account that is not split so");
                }
                case "moved" -> require(ttl > 0, key, "a completed move's give record without a lifetime");
                case "moves" -> fail("a move pending after every move was completed: " + key);
                default -> fail("a key the memory table does not account for: " + key);
            }
        }
    }

    private static String kindOf(String rest) {
        int colon = rest.indexOf(':');
        return colon < 0 ? rest : rest.substring(0, colon);
    }

    private List<String> keys() {
        List<String> out = new ArrayList<>();
        for (Object k : (List<?>) system.redis.command("KEYS", system.layout.prefix() + "*")) {
            out.add(String.valueOf(k));
        }
        return out;
    }

    private static long number(Object reply, long absent) {
        return reply == null ? absent : Long.parseLong(String.valueOf(reply));
    }

    private static void require(boolean ok, String key, String what) {
        if (!ok) {
            fail(what + ": " + key);
        }
    }

    private static void fail(String message) {
        throw new AssertionError(message);
    }
}
