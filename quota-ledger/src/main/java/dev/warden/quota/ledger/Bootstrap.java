package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.spi.KeyLayout;
import io.lettuce.core.RedisException;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * One {@link Reconciler#bootstrap()}: reloads Redis from the database after Redis lost its data.
 * Accounts first (a page at a time, pipelined, with their named balances), the partition markers
 * last, so no traffic reaches a partition before its accounts are back. Confined to the calling
 * thread; the reconciler's connection and its account restore script are lent to it.
 */
final class Bootstrap {

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    private final KeyLayout layout;
    private final DataSource dataSource;
    private final RedisClusterCommands<String, String> redis;
    private final String endpoint;
    /** Writes an account Redis lacks with a balance; CHANGED when Redis has it. */
    private final BiFunction<String, Long, CompletableFuture<RepairReport.Status>> load;
    private final BiFunction<CompletableFuture<RepairReport.Status>, String, RepairReport.Status> await;

    Bootstrap(KeyLayout layout, DataSource dataSource, RedisClusterCommands<String, String> redis, String endpoint,
              BiFunction<String, Long, CompletableFuture<RepairReport.Status>> load,
              BiFunction<CompletableFuture<RepairReport.Status>, String, RepairReport.Status> await) {
        this.layout = layout;
        this.dataSource = dataSource;
        this.redis = redis;
        this.endpoint = endpoint;
        this.load = load;
        this.await = await;
    }

    BootstrapReport run() {
        int loaded = 0;
        int present = 0;
        int balances = 0;
        Set<Integer> unmarked = unmarkedPartitions();
        try (Connection c = dataSource.getConnection()) {
            String after = "";
            while (true) {
                Map<String, Long> page = new LinkedHashMap<>();
                // Available + held: the holds Redis lost are gone, so what they held is available again.
                try (PreparedStatement ps = c.prepareStatement("SELECT account, balance + held FROM ledger_accounts"
                        + " WHERE account > ? ORDER BY account LIMIT " + Reconciler.PAGE)) {
                    ps.setString(1, after);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            page.put(rs.getString(1), rs.getLong(2));
                        }
                    }
                }
                if (page.isEmpty()) {
                    break;
                }
                Map<String, CompletableFuture<RepairReport.Status>> calls = new LinkedHashMap<>();
                page.forEach((account, balance) -> calls.put(account, load.apply(account, balance)));
                Set<String> loadedHere = new HashSet<>();
                for (Map.Entry<String, CompletableFuture<RepairReport.Status>> e : calls.entrySet()) {
                    switch (await.apply(e.getValue(), "load account " + e.getKey())) {
                        case APPLIED -> {
                            loaded++;
                            loadedHere.add(e.getKey());
                        }
                        case CHANGED -> {
                            present++;
                            // Present in a partition still without its marker: a bootstrap that stopped before
                            // its markers loaded it, and perhaps not its named balances.
                            if (unmarked.contains(layout.partition(e.getKey()))) {
                                loadedHere.add(e.getKey());
                            }
                        }
                        default -> throw new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker "
                                + layout.markerOf(e.getKey()) + " was written for another partition count");
                    }
                }
                String last = new ArrayList<>(page.keySet()).get(page.size() - 1);
                balances += loadBalances(c, after, last, loadedHere);
                after = last;
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's accounts: " + e.getMessage(), e);
        }
        int markers = 0;
        try {
            for (int p = 0; p < layout.partitions(); p++) {
                String ok = redis.set(layout.marker(p), layout.markerValue(), SetArgs.Builder.nx());
                if ("OK".equals(ok)) {
                    markers++;
                } else {
                    String value = redis.get(layout.marker(p));
                    if (value != null && !value.equals(layout.markerValue())) {
                        throw new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker " + layout.marker(p)
                                + " says '" + value + "', not '" + layout.markerValue() + "'");
                    }
                }
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed writing partition"
                    + " markers: " + e.getMessage(), e);
        }
        log.warn("ledger bootstrap: {} accounts loaded into Redis from the database ({} named balances), {} already"
                + " there, {} partition markers written", loaded, balances, present, markers);
        return new BootstrapReport(loaded, present, markers, balances);
    }

    /** The partitions without a marker: no traffic runs there (DATA_LOST) until bootstrap writes it. */
    private Set<Integer> unmarkedPartitions() {
        Set<Integer> unmarked = new HashSet<>();
        try {
            for (int p = 0; p < layout.partitions(); p++) {
                if (redis.get(layout.marker(p)) == null) {
                    unmarked.add(p);
                }
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed reading partition"
                    + " markers: " + e.getMessage(), e);
        }
        return unmarked;
    }

    /**
     * Writes the named balances the database holds for the accounts of {@code (after, last]} that were
     * just loaded (or loaded by a bootstrap that stopped before writing the markers) (never over a balance Redis has: HSETNX); the number written. Runs before the
     * partition markers exist, so no posting can touch these accounts meanwhile.
     */
    private int loadBalances(Connection c, String after, String last, Set<String> loaded) throws SQLException {
        if (loaded.isEmpty()) {
            return 0;
        }
        int written = 0;
        try (PreparedStatement ps = c.prepareStatement("SELECT account, name, amount FROM ledger_balances"
                + " WHERE account > ? AND account <= ? ORDER BY account, name")) {
            ps.setString(1, after);
            ps.setString(2, last);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String account = rs.getString(1);
                    if (!loaded.contains(account)) {
                        continue;
                    }
                    try {
                        if (Boolean.TRUE.equals(redis.hsetnx(layout.balancesKey(account), rs.getString(2),
                                Long.toString(rs.getLong(3))))) {
                            written++;
                        }
                    } catch (RedisException e) {
                        throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed loading the"
                                + " named balances of account " + account + ": " + e.getMessage(), e);
                    }
                }
            }
        }
        return written;
    }
}
