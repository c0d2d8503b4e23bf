package dev.warden.lock.jdbc.internal;

import dev.warden.lock.Redaction;
import dev.warden.lock.settings.AccessSettings;
import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockConfig;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The jdbc backend's configuration: the one endpoint URL, the login, the pool's size and whether the
 * driver creates its tables. Never printed with the password ({@link #toString()}).
 *
 * @param url the {@code jdbc:postgresql://} URL as given
 * @param username the database user, or null for the driver's default
 * @param password the password, or null
 * @param poolSize connections for statements (the listening connection comes on top)
 * @param createSchema whether {@code open} creates the tables and sequence when they are missing
 */
public record JdbcSettings(String url, String username, String password, int poolSize, boolean createSchema) {

    static final String PREFIX = "warden.lock.jdbc.";

    static final Setting<Integer> POOL_SIZE = Setting.whole(PREFIX + "pool-size", 8, 1, 256,
            "connections the client runs statements on (one more listens for releases)");
    static final Setting<Boolean> CREATE_SCHEMA = Setting.flag(PREFIX + "create-schema", true,
            "create `warden_lock`, `warden_lock_epoch` and the sequence `warden_lock_token` when missing; off when a"
                    + " migration tool owns the schema (docs/jdbc.md has the DDL)");

    public static final SettingTable TABLE;

    static {
        List<Setting<?>> all = new ArrayList<>(AccessSettings.login(PREFIX, "the database"));
        all.add(POOL_SIZE);
        all.add(CREATE_SCHEMA);
        TABLE = new SettingTable(PREFIX, "Locks: the jdbc backend (PostgreSQL)", all);
    }

    /** Every problem with the configuration; empty when it is usable. Never shows a secret. */
    public static List<String> problems(LockConfig config, Function<String, String> environment) {
        List<String> problems = new ArrayList<>(config.read(TABLE, environment).problems());
        if (config.endpoints().size() != 1) {
            problems.add("warden.lock.endpoints must be one jdbc:postgresql://host[:port]/database URL, was "
                    + config.endpoints().size() + " endpoints");
            return problems;
        }
        String url = config.endpoints().get(0).trim();
        if (!url.toLowerCase(Locale.ROOT).startsWith("jdbc:postgresql://")) {
            problems.add("warden.lock.endpoints: '" + Redaction.redact(url) + "' is not a jdbc:postgresql:// URL"
                    + " (the jdbc backend runs on PostgreSQL only)");
            return problems;
        }
        try {
            URI uri = new URI(url.substring("jdbc:".length()));
            if (uri.getRawUserInfo() != null || (uri.getRawQuery() != null
                    && uri.getRawQuery().toLowerCase(Locale.ROOT).matches("(^|.*&)(user|password)=.*"))) {
                problems.add("warden.lock.endpoints: put the login in " + PREFIX + "username and " + PREFIX
                        + "password (or password-file, password-env), not in the URL");
            }
            if (uri.getPath() == null || uri.getPath().length() < 2) {
                problems.add("warden.lock.endpoints: '" + Redaction.redact(url) + "' names no database");
            }
        } catch (URISyntaxException e) {
            problems.add("warden.lock.endpoints: '" + Redaction.redact(url) + "' is not a URL: " + Redaction.redact(e.getReason()));
        }
        return problems;
    }

    /** The settings of a configuration {@link #problems} found usable. */
    public static JdbcSettings of(LockConfig config, Function<String, String> environment) {
        SettingTable.Values values = config.read(TABLE, environment);
        String username = values.find(setting("username")).map(Object::toString).orElse(null);
        String password = values.find(setting("password")).map(Object::toString).orElse(null);
        return new JdbcSettings(config.endpoints().get(0).trim(), username, password, values.get(POOL_SIZE),
                values.get(CREATE_SCHEMA));
    }

    private static Setting<?> setting(String name) {
        return TABLE.settings().stream().filter(s -> s.key().equals(PREFIX + name)).findFirst().orElseThrow();
    }

    @Override
    public String toString() {
        return "JdbcSettings[url=" + Redaction.redact(url) + ", username=" + username + ", password="
                + (password == null ? "none" : Redaction.MASK) + ", poolSize=" + poolSize + ", createSchema=" + createSchema + "]";
    }
}
