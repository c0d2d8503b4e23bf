package dev.warden.examples.demo.support;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.warden.examples.ledger.LedgerSync;
import dev.warden.lock.Redaction;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The billing demo's ledger database: the one a JDBC URL names, else a fresh H2 file in
 * {@code -Dwarden.demo.dir} (demo.sh: {@code examples/target/warden-demo}) or the temporary directory,
 * kept afterwards for a look. Opened as the copyable {@link LedgerSync} opens it.
 */
public final class LedgerDatabase {

    private LedgerDatabase() {
    }

    /**
     * @param jdbcUrl  the database, or {@code null} for the H2 file
     * @param jdbcUser its user, or {@code null}; the password comes from {@code WARDEN_JDBC_PASSWORD}
     * @throws SetupException when the database cannot be prepared or opened
     */
    public static HikariDataSource open(String jdbcUrl, String jdbcUser, PrintStream out) {
        String url = jdbcUrl;
        String shown;
        if (url == null) {
            Path dir = demoDirectory();
            Path file = dir.resolve("ledger");
            try {
                Files.createDirectories(dir);
                Files.deleteIfExists(dir.resolve("ledger.mv.db"));
                Files.deleteIfExists(dir.resolve("ledger.trace.db"));
            } catch (IOException e) {
                throw new SetupException("cannot prepare the H2 ledger in " + dir + ": " + e);
            }
            url = "jdbc:h2:file:" + file.toAbsolutePath();
            shown = "H2 file " + file.toAbsolutePath() + ".mv.db (fresh each run, kept afterwards)";
        } else {
            shown = Redaction.redact(url);
        }
        HikariDataSource ds;
        try {
            ds = LedgerSync.dataSource(url, jdbcUser);
        } catch (HikariPool.PoolInitializationException | IllegalArgumentException | IllegalStateException e) {
            throw new SetupException("cannot open the ledger database " + shown + ": "
                    + Redaction.redact(e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        }
        out.printf("  %-10s %s%n", "ledger", shown);
        return ds;
    }

    /** {@code -Dwarden.demo.dir}, else the temporary directory. */
    private static Path demoDirectory() {
        String dir = System.getProperty("warden.demo.dir");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "warden-demo-" + System.getProperty("user.name", "user"));
    }
}
