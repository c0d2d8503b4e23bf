package dev.warden.lock.cli;

import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * The operator's command line for locks, over {@link LockAdmin}:
 *
 * <pre>
 * java -cp ... dev.warden.lock.cli.LockCli list --settings warden.properties
 * java -cp ... dev.warden.lock.cli.LockCli show merchant:42 --settings warden.properties
 * java -cp ... dev.warden.lock.cli.LockCli release merchant:42 --token 1796265528575635 --operator alice --why "INC-1234"
 * </pre>
 * The backend comes from {@code --settings} (a properties file of {@code warden.lock.*}), then
 * {@code -Dwarden.lock.*} system properties and {@code WARDEN_LOCK_*} environment variables, with
 * {@code --backend}, {@code --endpoints} and {@code --namespace} on top; a password belongs in
 * {@code warden.lock.<backend>.password-file} or {@code -env}, never on the command line, and an
 * endpoint with one is refused. Exit codes: 0 done (shown, released), 1 nothing to do (the lock is
 * free; no hold with that token), 2 usage or configuration, 3 failure (the backend did not answer).
 */
@Command(name = "locks", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT,
        description = "Warden locks: list the holders of a namespace, show a lock's holder, force-release a hold.",
        subcommands = {LockCli.ListHolders.class, LockCli.Show.class, LockCli.Release.class})
public final class LockCli implements Callable<Integer> {

    private LockCli() {
    }

    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs a command line, writing to {@code out} and {@code err}; returns its exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new LockCli());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("locks: " + Redaction.redact(String.valueOf(e.getMessage())));
            return e instanceof LockException l && (l.reason() == LockException.Reason.CONFIGURATION
                    || l.reason() == LockException.Reason.NO_PROVIDER) || e instanceof IllegalArgumentException ? 2 : 3;
        });
        // picocli's own messages echo the offending argument, which may be an endpoint with a password.
        cli.setParameterExceptionHandler((e, ignored) -> {
            e.getCommandLine().getErr().println("locks: " + Redaction.redact(e.getMessage()));
            return 2;
        });
        return cli.execute(args);
    }

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 2;
    }

    /** Where the backend is. */
    static final class Backend {
        @Option(names = "--settings", description = "a properties file of warden.lock.* settings")
        Path file;

        @Option(names = "--backend", description = "redis, etcd or zookeeper (warden.lock.backend)")
        String backend;

        @Option(names = "--endpoints", description = "comma-separated endpoints, without passwords (warden.lock.endpoints)")
        String endpoints;

        @Option(names = "--namespace", description = "the lock namespace (warden.lock.namespace; default warden)")
        String namespace;

        /** System properties and environment, then the file, then the options. */
        Map<String, Object> settings() {
            Map<String, Object> s = new HashMap<>(WardenSettings.withSystemDefaults(Map.of()));
            if (file != null) {
                Properties p = new Properties();
                try (Reader r = Files.newBufferedReader(file)) {
                    p.load(r);
                } catch (IOException e) {
                    throw new LockException(LockException.Reason.CONFIGURATION, "cannot read the settings file " + file
                            + ": " + e.getMessage(), e);
                }
                p.stringPropertyNames().forEach(k -> s.put(k, p.getProperty(k)));
            }
            if (backend != null) {
                s.put("warden.lock.backend", backend);
            }
            if (endpoints != null) {
                if (!Redaction.redact(endpoints).equals(endpoints)) {
                    throw new LockException(LockException.Reason.CONFIGURATION, "--endpoints carries a password: put it in"
                            + " warden.lock.<backend>.password-file or -env in --settings instead");
                }
                s.put("warden.lock.endpoints", endpoints);
            }
            if (namespace != null) {
                s.put("warden.lock.namespace", namespace);
            }
            return s;
        }
    }

    @Command(name = "list", description = "Lists every held lock of the namespace: name, holder id, token (tab-separated).")
    static final class ListHolders implements Callable<Integer> {
        @Mixin
        Backend backend;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (LockClient locks = LockClient.create(backend.settings())) {
                java.util.List<LockAdmin.Holding> holdings = locks.admin().holders();
                PrintWriter out = spec.commandLine().getOut();
                holdings.forEach(h -> out.println(h.name() + "\t" + h.holderId() + "\t" + h.token()));
                spec.commandLine().getErr().println(holdings.size() + " held");
                return 0;
            }
        }
    }

    @Command(name = "show", description = "Shows who holds a lock and its token (exit 1 when it is free).")
    static final class Show implements Callable<Integer> {
        @Mixin
        Backend backend;

        @Parameters(paramLabel = "NAME", description = "the lock name")
        String name;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (LockClient locks = LockClient.create(backend.settings())) {
                Optional<LockAdmin.Holding> holding = locks.admin().holder(name);
                PrintWriter out = spec.commandLine().getOut();
                if (holding.isEmpty()) {
                    out.println("lock '" + name + "' is free");
                    return 1;
                }
                out.println("lock '" + name + "' held by " + holding.get().holderId() + " with token " + holding.get().token());
                return 0;
            }
        }
    }

    @Command(name = "release", description = "Force-releases the hold of a lock with the given token, audited"
            + " (exit 1 when no hold has that token).")
    static final class Release implements Callable<Integer> {
        @Mixin
        Backend backend;

        @Parameters(paramLabel = "NAME", description = "the lock name")
        String name;

        @Option(names = "--token", required = true, description = "the hold's token, as 'show' printed it")
        long token;

        @Option(names = "--operator", required = true, description = "who asks, for the audit")
        String operator;

        @Option(names = "--why", required = true, description = "why, for the audit")
        String why;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (LockClient locks = LockClient.create(backend.settings())) {
                boolean released = locks.admin().forceRelease(name, token, operator, why);
                PrintWriter out = spec.commandLine().getOut();
                out.println(released ? "lock '" + name + "': the hold with token " + token + " was released; its holder"
                        + " is told FORCED at its next renewal" : "lock '" + name + "': no hold with token " + token + ", nothing released");
                return released ? 0 : 1;
            }
        }
    }
}
