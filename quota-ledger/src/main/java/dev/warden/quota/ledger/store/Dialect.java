package dev.warden.quota.ledger.store;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;

/** The databases the ledger's schema is written for; each has its own migrations folder. */
public enum Dialect {
    /** Production, and what CI tests against. */
    POSTGRESQL("postgresql"),
    /** The demo's embedded default; tested too. */
    H2("h2");

    private final String folder;

    Dialect(String folder) {
        this.folder = folder;
    }

    /** The dialect of the database behind {@code connection}. */
    public static Dialect of(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("postgresql")) {
            return POSTGRESQL;
        }
        if (product.contains("h2")) {
            return H2;
        }
        throw new QuotaException(Reason.SCHEMA, "the ledger supports PostgreSQL and H2, not "
                + connection.getMetaData().getDatabaseProductName());
    }

    /** The folder of this dialect's own migrations, under {@code dev/warden/quota/ledger/migration/}. */
    public String folder() {
        return folder;
    }

    /** Migrations both dialects share (written in SQL both accept), then the dialect's own: Flyway's locations. */
    public String[] locations() {
        return new String[]{"classpath:dev/warden/quota/ledger/migration/common",
                "classpath:dev/warden/quota/ledger/migration/" + folder};
    }
}
