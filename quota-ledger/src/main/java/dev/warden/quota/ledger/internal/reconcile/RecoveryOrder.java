package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.internal.consume.Compensations;
import dev.warden.quota.redis.KeyLayout;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What must come before a repair, checked rather than only written down: a repair writes the ledger's
 * figures over Redis's, which is right only when the ledger is complete and Redis did not lose its data.
 *
 * <ul>
 *   <li>No partition that holds ledger accounts may lack its marker: Redis lost its data there, and only
 *       bootstrap restores it whole (holds, named balances, fence marks). A repair would bring back bare
 *       balances and make the partition look intact, so its other accounts would answer "not found", and the
 *       later bootstrap would skip it.</li>
 *   <li>No quarantined entry may be unresolved: the ledger lacks what it refused, so its figure is not
 *       the truth, and writing it over Redis would reverse acknowledged changes.</li>
 *   <li>No refused compensation may be unresolved: both sides hold a replay a person must decide on.</li>
 * </ul>
 */
public final class RecoveryOrder {

    private RecoveryOrder() {
    }

    /**
     * @throws QuotaException {@link Reason#RECOVERY_ORDER} naming what to run or resolve first
     */
    public static void checkRepair(Connection c, KeyLayout layout, RedisClusterCommands<String, String> redis) throws SQLException {
        List<String> problems = new ArrayList<>();
        Set<Integer> unmarked = new TreeSet<>();
        for (int p = 0; p < layout.partitions(); p++) {
            if (redis.get(layout.marker(p)) == null) {
                unmarked.add(p);
            }
        }
        Set<Integer> lost = unmarked.isEmpty() ? Set.of() : partitionsWithAccounts(c, layout, unmarked);
        if (!lost.isEmpty()) {
            problems.add("partitions " + lost + " hold ledger accounts but have no marker in Redis (Redis lost its data):"
                    + " run bootstrap first");
        }
        long quarantined = count(c, "SELECT COUNT(*) FROM ledger_quarantine WHERE resolved_at IS NULL");
        if (quarantined > 0) {
            problems.add(quarantined + " quarantined entries are unresolved (the ledger lacks what it refused): resolve"
                    + " them first ('ledger quarantine')");
        }
        long refused = unresolvedCompensations(c);
        if (refused > 0) {
            problems.add(refused + " refused compensations are unresolved (both sides hold a replay): resolve them first"
                    + " ('ledger compensations')");
        }
        if (!problems.isEmpty()) {
            throw new QuotaException(Reason.RECOVERY_ORDER, "repair refused, nothing was written: "
                    + String.join("; ", problems));
        }
    }

    /** Whether the ledger holds one half of a move between the account's buckets and not the other. */
    public static boolean halfMoves(Connection c, String account) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM ledger_entries e WHERE e.account = ? AND e.kind IN"
                + " ('moveout', 'movein') AND NOT EXISTS (SELECT 1 FROM ledger_entries x WHERE x.account = e.account AND"
                + " x.request_id = CASE WHEN e.kind = 'moveout' THEN 'movein:' ELSE 'moveout:' END"
                + " || SUBSTRING(e.request_id FROM POSITION(':' IN e.request_id) + 1))")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Compensations Redis refused that nobody has resolved. */
    public static long unresolvedCompensations(Connection c) throws SQLException {
        return count(c, "SELECT COUNT(*) FROM ledger_compensations WHERE outcome IS NOT NULL AND outcome NOT IN"
                + " ('APPLIED', 'DUPLICATE') AND resolved_at IS NULL");
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Which of these partitions hold at least one ledger account (one pass over the accounts, a page at a time). */
    private static Set<Integer> partitionsWithAccounts(Connection c, KeyLayout layout, Set<Integer> partitions)
            throws SQLException {
        Set<Integer> found = new TreeSet<>();
        String after = "";
        while (found.size() < partitions.size()) {
            List<String> page = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT account FROM ledger_accounts WHERE account > ?"
                    + " ORDER BY account LIMIT " + Pages.ACCOUNTS)) {
                ps.setString(1, after);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        page.add(rs.getString(1));
                    }
                }
            }
            if (page.isEmpty()) {
                break;
            }
            for (String a : page) {
                int p = layout.partition(a);
                if (partitions.contains(p)) {
                    found.add(p);
                }
            }
            after = page.get(page.size() - 1);
        }
        return found;
    }
}
