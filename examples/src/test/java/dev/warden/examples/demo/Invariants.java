package dev.warden.examples.demo;

import dev.warden.examples.ledger.LedgerSync;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The billing demo's checker, a test of the money path: after the charges, the journal is drained and
 * reconciled, and the figures of three witnesses must agree: what each caller was told was applied
 * ({@link Load#acknowledged}), Redis's balances, and the ledger database's rows. Only this run's
 * accounts count (their ids start with {@code prefix}), so a database shared with earlier runs does
 * not fail it.
 */
final class Invariants {

    private final String prefix;
    private final List<String> accounts;
    private final long initialQuota;

    /**
     * @param prefix       what this run's account ids start with
     * @param accounts     this run's accounts; the first is the hot one
     * @param initialQuota each account's quota at the start
     */
    Invariants(String prefix, List<String> accounts, long initialQuota) {
        this.prefix = prefix;
        this.accounts = List.copyOf(accounts);
        this.initialQuota = initialQuota;
    }

    /** Checks every invariant and returns the report, passed or not. */
    Report check(String lock, QuotaService quota, DataSource ds, Load l, Duration elapsed, long backlog,
                 LedgerConsumer.Stats stats, LedgerSync.Reconciliation reconciliation) throws SQLException {
        Map<String, Long> ledgerBalances = new HashMap<>();
        long ledgerDeductions;
        long ledgerEntries;
        try (Connection c = ds.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT account, balance FROM ledger_accounts WHERE account LIKE ?")) {
                ps.setString(1, prefix + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ledgerBalances.put(rs.getString(1), rs.getLong(2));
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(SUM(CASE WHEN kind = 'deduct' THEN amount"
                    + " ELSE 0 END), 0), COUNT(*) FROM ledger_entries WHERE account LIKE ?")) {
                ps.setString(1, prefix + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    ledgerDeductions = rs.getLong(1);
                    ledgerEntries = rs.getLong(2);
                }
            }
        }

        List<Report.Invariant> invariants = new ArrayList<>();
        invariants.add(new Report.Invariant("the journal is drained into the ledger (backlog 0)", backlog == 0,
                String.format(Locale.ROOT, "backlog %d; %,d entries of this run in the ledger", backlog, ledgerEntries)));

        long lowestRedis = Long.MAX_VALUE;
        long lowestLedger = Long.MAX_VALUE;
        List<String> negative = new ArrayList<>();
        List<String> disagree = new ArrayList<>();
        List<String> unbalanced = new ArrayList<>();
        long acknowledged = 0;
        long finals = 0;
        for (int i = 0; i < accounts.size(); i++) {
            String a = accounts.get(i);
            OptionalLong r = quota.balance(a);
            Long d = ledgerBalances.get(a);
            long ack = l.acknowledged(i);
            acknowledged += ack;
            finals += d == null ? 0 : d;
            if (r.isPresent()) {
                lowestRedis = Math.min(lowestRedis, r.getAsLong());
            }
            if (d != null) {
                lowestLedger = Math.min(lowestLedger, d);
            }
            if ((r.isPresent() && r.getAsLong() < 0) || (d != null && d < 0)) {
                negative.add(BillingDemo.label(i) + " redis " + text(r) + ", ledger " + d);
            }
            if (r.isEmpty() || d == null || r.getAsLong() != d) {
                disagree.add(BillingDemo.label(i) + ": redis " + text(r) + ", ledger " + (d == null ? "absent" : d));
            }
            if (d == null || initialQuota - d != ack) {
                unbalanced.add(BillingDemo.label(i) + ": acknowledged " + ack + ", initial − ledger "
                        + (d == null ? "?" : initialQuota - d));
            }
        }
        invariants.add(new Report.Invariant("no balance is negative", negative.isEmpty(), negative.isEmpty()
                ? String.format(Locale.ROOT, "lowest: Redis %,d, ledger %,d (%d merchants)", lowestRedis, lowestLedger,
                accounts.size()) : first(negative)));
        invariants.add(new Report.Invariant("ledger balance = Redis balance, for every merchant", disagree.isEmpty(),
                disagree.isEmpty() ? accounts.size() + " of " + accounts.size() + " merchants agree"
                        : disagree.size() + " disagree: " + first(disagree)));
        long spent = (long) accounts.size() * initialQuota - finals;
        boolean sums = acknowledged == ledgerDeductions && ledgerDeductions == spent && unbalanced.isEmpty();
        invariants.add(new Report.Invariant("Σ acknowledged deductions = Σ ledger deductions = Σ (initial − final)", sums,
                String.format(Locale.ROOT, "%,d = %,d = %,d units%s", acknowledged, ledgerDeductions, spent,
                        unbalanced.isEmpty() ? "; per merchant too" : "; per merchant: " + first(unbalanced))));

        var quarantine = Ledger.quarantine(ds, true);
        long ours = quarantine.stream().filter(q -> q.account().startsWith(prefix)).count();
        long others = quarantine.size() - ours;
        invariants.add(new Report.Invariant("no quarantined entries", ours == 0, ours + " unresolved"
                + (others > 0 ? " (" + others + " from earlier runs in this database, not counted)" : "")));

        List<LedgerSync.Drift> drift = reconciliation.drifted().stream().filter(d -> d.account().startsWith(prefix)).toList();
        long otherDrift = reconciliation.drifted().size() - drift.size();
        String reconciled = String.format(Locale.ROOT, "%d accounts checked, %d drifted, %d journal entries not yet in"
                        + " the database, %d unresolved quarantined%s", reconciliation.accountsChecked(), drift.size(),
                reconciliation.unpersistedEntries(), reconciliation.unresolvedQuarantine(),
                otherDrift > 0 ? " (" + otherDrift + " accounts of earlier runs differ, not counted)" : "");
        invariants.add(new Report.Invariant("reconciliation finds no drift", drift.isEmpty(), drift.isEmpty()
                ? reconciliation.accountsChecked() + " accounts checked, 0 drifted"
                : first(drift.stream().map(d -> d.account() + ": redis " + text(d.redis()) + ", expected "
                        + text(d.expected())).toList())));

        String hotAccount = accounts.get(0);
        OptionalLong hotRedis = quota.balance(hotAccount);
        String hot = String.format(Locale.ROOT, "m00: %,d → %s units (Redis) / %s (ledger); %,d units acknowledged",
                initialQuota, hotRedis.isPresent() ? String.format(Locale.ROOT, "%,d", hotRedis.getAsLong()) : "absent",
                ledgerBalances.containsKey(hotAccount) ? String.format(Locale.ROOT, "%,d", ledgerBalances.get(hotAccount))
                        : "absent", l.acknowledged(0));
        return new Report(lock, elapsed, l.channels(), l.outcomes(), l.usedUp(), l.stalePrices(), l.errors(),
                l.retries(), hot, ledgerEntries, backlog, stats, reconciled, invariants);
    }

    private static String first(List<String> items) {
        return String.join("; ", items.subList(0, Math.min(5, items.size()))) + (items.size() > 5 ? "; ..." : "");
    }

    private static String text(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "absent";
    }
}
