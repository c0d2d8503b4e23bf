package dev.warden.quota.ledger.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.lock.Redaction;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerSettings;
import dev.warden.quota.redis.QuotaConfig;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The options {@link LedgerCli}'s commands share (the database, the quota engine's Redis, a list a person
 * resolves) and how their values are read: durations in the settings' grammar, no password on a command line.
 */
final class CliOptions {

    private CliOptions() {
    }

    /**
     * Refuses a password on the command line, where every user of the host can read it (ps,
     * /proc/&lt;pid&gt;/cmdline, shell history).
     */
    static void refuseSecret(String option, String value, String instead) {
        if (value != null && !Redaction.redact(value).equals(value)) {
            throw new QuotaException(QuotaException.Reason.CONFIGURATION, option + " '" + Redaction.redact(value)
                    + "' carries a password, which a command line shows to every user of the host: give it with " + instead);
        }
    }

    /** The quota settings' grammar: 500ms, 30s, 2m, 1h, 1d or ISO-8601. */
    static Duration duration(String text) {
        Duration d = QuotaConfig.parseDuration(text);
        if (d == null) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a duration (500ms, 30s, 2m, 1h, 1d, PT30S)");
        }
        return d;
    }

    /** The database options. */
    static final class Database {
        @Option(names = "--jdbc", required = true, description = "JDBC URL of the ledger database")
        String url;

        @Option(names = "--jdbc-user", description = "database user (or in the URL); password from $WARDEN_JDBC_PASSWORD")
        String user;

        @Option(names = "--pool-size", defaultValue = "4", description = "connection pool size (default ${DEFAULT-VALUE})")
        int poolSize;

        HikariDataSource open() {
            refuseSecret("--jdbc", url, "the environment variable WARDEN_JDBC_PASSWORD");
            HikariConfig c = new HikariConfig();
            c.setJdbcUrl(url);
            if (user != null) {
                c.setUsername(user);
            }
            String password = System.getenv("WARDEN_JDBC_PASSWORD");
            if (password != null) {
                c.setPassword(password);
            }
            c.setMaximumPoolSize(poolSize);
            c.setMinimumIdle(1);
            c.setConnectionTimeout(5_000);
            c.setInitializationFailTimeout(-1); // start even while the database is down: the consumer retries
            c.setPoolName("warden-ledger");
            return new HikariDataSource(c);
        }
    }

    /** The Redis options. */
    static final class Redis {
        @Option(names = "--redis", description = "the quota engine's Redis: redis://host:port[/db],"
                + " redis-sentinel://s1:26379,s2:26379/<master name> or redis-cluster://n1:6379,n2:6379 (or"
                + " warden.quota.endpoint in --settings, -Dwarden.quota.endpoint or WARDEN_QUOTA_ENDPOINT)")
        String endpoint;

        @Option(names = "--namespace", description = "the quota engine's namespace (warden.quota.namespace; default none)")
        String namespace;

        @Option(names = "--partitions", description = "the quota engine's partition count (default 16)")
        Integer partitions;

        @Option(names = "--group", description = "warden.ledger.group: the consumer group")
        String group;

        @Option(names = "--redis-connect-timeout", description = "(default 5s)")
        Duration connectTimeout;

        @Option(names = "--redis-timeout", description = "deadline of every Redis call (default 5s)")
        Duration requestTimeout;

        @Option(names = "--settings", description = "a properties file of warden.quota.*, warden.ledger.* and warden.lock.*"
                + " settings (every one: ledger settings); the options win over it, and it wins over system properties and"
                + " WARDEN_* environment variables")
        java.nio.file.Path file;

        /** Options, then the settings file, then -Dwarden.* system properties, then WARDEN_* environment variables. */
        Map<String, Object> settings() {
            Map<String, Object> s = new HashMap<>(dev.warden.lock.WardenSettings.withSystemDefaults(Map.of()));
            if (file != null) {
                java.util.Properties p = new java.util.Properties();
                try (java.io.Reader r = java.nio.file.Files.newBufferedReader(file)) {
                    p.load(r);
                } catch (java.io.IOException e) {
                    throw new QuotaException(QuotaException.Reason.CONFIGURATION, "cannot read the settings file " + file
                            + ": " + e.getMessage(), e);
                }
                p.stringPropertyNames().forEach(k -> s.put(k, p.getProperty(k)));
            }
            if (endpoint != null) {
                refuseSecret("--redis", endpoint, "warden.quota.redis.password-file or -env in --settings, or the"
                        + " environment variable WARDEN_QUOTA_REDIS__PASSWORD_FILE or WARDEN_QUOTA_REDIS__PASSWORD");
                s.put("warden.quota.endpoint", endpoint);
            }
            if (partitions != null) {
                s.put("warden.quota.partitions", Integer.toString(partitions));
            }
            if (connectTimeout != null) {
                s.put("warden.quota.connect-timeout", connectTimeout);
            }
            if (requestTimeout != null) {
                s.put("warden.quota.request-timeout", requestTimeout);
            }
            if (namespace != null) {
                s.put("warden.quota.namespace", namespace);
            }
            if (group != null) {
                s.put(LedgerSettings.GROUP.key(), group);
            }
            return s;
        }

        /** The consumer group these settings name ({@code --group}, else {@code warden.ledger.group}, else the default). */
        static String group(Map<String, Object> settings) {
            Object group = settings.get(LedgerSettings.GROUP.key());
            return group == null ? LedgerSettings.GROUP.defaultValue() : group.toString().trim();
        }
    }

    /** The options of a list a person works through: every row or the unresolved ones, and marking one resolved. */
    static final class Resolution {
        @Option(names = "--all", description = "include resolved ones")
        boolean all;

        @Option(names = "--resolve", arity = "2", paramLabel = "STREAM ENTRY",
                description = "mark one resolved (after a person settled what it says), with --note")
        List<String> resolve;

        @Option(names = "--note", description = "what was done (recorded with --resolve)")
        String note;

        /** Resolves one, or prints the list; exit 0 when resolved or when the list is empty, 1 otherwise. */
        <T> int run(HikariDataSource ds, String what, String plural, Resolver resolver, BiFunction<HikariDataSource, Boolean, List<T>> list,
                    Function<T, String> line) {
            if (resolve != null) {
                boolean done = resolver.resolve(ds, resolve.get(0), resolve.get(1), note == null ? "" : note);
                System.out.println(done ? "resolved" : "no unresolved " + what + " " + resolve);
                return done ? 0 : 1;
            }
            List<T> rows = list.apply(ds, !all);
            rows.forEach(r -> System.out.println(line.apply(r)));
            System.out.println(rows.size() + " " + (rows.size() == 1 ? what : plural));
            return rows.isEmpty() ? 0 : 1;
        }

        interface Resolver {
            boolean resolve(HikariDataSource ds, String stream, String entryId, String note);
        }
    }
}
