package dev.warden.examples.demo;

import dev.warden.examples.demo.support.Closer;
import dev.warden.examples.demo.support.LockEndpoints;
import dev.warden.examples.demo.support.QuietLogging;
import dev.warden.examples.demo.support.Servers;
import dev.warden.examples.demo.support.SettingsFile;
import dev.warden.examples.demo.support.SetupException;
import dev.warden.examples.quickstart.QuickStart;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.ReleaseOutcome;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ./demo.sh quick-start FILE [--embedded]}: runs the copyable {@link QuickStart} with a settings
 * file, against the endpoints it names or, with {@code --embedded}, against a server of the file's
 * backend launched locally (testkit), so the same code can be watched on every backend.
 */
@Command(name = "quick-start", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        version = "Warden quick start 0.1.0-SNAPSHOT",
        description = {
            "Acquire a lock, make a fenced write, release: the same code for Redis, etcd and ZooKeeper, the backend chosen"
                    + " by the settings file.",
            ""},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:the fencing did not behave", "2:usage error",
            "3:the backend could not be reached (try --embedded)"})
public final class QuickStartDemo implements Callable<Integer> {

    /** What {@link #execute} returns. */
    public record Result(int exitCode, String backend, long fencingToken, boolean fencedWriteAccepted,
                         boolean staleWriteRefused, ReleaseOutcome release) {
    }

    @Parameters(paramLabel = "FILE", defaultValue = "examples/config/redis.properties",
            description = "Settings file with warden.lock.* settings (default: ${DEFAULT-VALUE}).")
    Path file;

    @Option(names = "--embedded", description = "Launch a local server for the file's backend (testkit) instead of"
            + " using the endpoints the file names.")
    boolean embedded;

    private PrintStream out = System.out;
    private PrintStream err = System.err;
    private QuickStart.Result result;

    public static void main(String[] args) {
        System.exit(execute(args, System.out, System.err).exitCode());
    }

    /** Runs in this process and returns instead of exiting. */
    public static Result execute(String[] args, PrintStream out, PrintStream err) {
        QuickStartDemo q = new QuickStartDemo();
        q.out = out;
        q.err = err;
        QuietLogging.apply();
        CommandLine cli = new CommandLine(q)
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setParameterExceptionHandler((e, given) -> {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 2;
        });
        int code = cli.execute(args);
        QuickStart.Result r = q.result;
        return r == null ? new Result(code, "", 0, false, false, null)
                : new Result(code, r.backend(), r.fencingToken(), r.fencedWriteAccepted(), r.staleWriteRefused(), r.release());
    }

    @Override
    public Integer call() throws Exception {
        Map<String, String> settings;
        try {
            settings = new LinkedHashMap<>(SettingsFile.load(file));
        } catch (SetupException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 2;
        }
        String backend = LockEndpoints.backend(null, settings);
        try (Closer closer = new Closer()) {
            if (embedded) {
                settings.remove("warden.lock.endpoints");
                LockEndpoints.resolve(settings, backend, null, new Servers(closer, out));
            }
            out.printf("%s: backend %s at %s%n", file, backend, Redaction.redact(settings.get("warden.lock.endpoints")));
            result = QuickStart.quickStart(settings, out);
            return result.fencedWriteAccepted() && result.staleWriteRefused() ? 0 : 1;
        } catch (SetupException | IllegalStateException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 3;
        } catch (LockException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            if (e.reason() == LockException.Reason.UNAVAILABLE) {
                err.println("quick-start: nothing answers at " + Redaction.redact(settings.get("warden.lock.endpoints"))
                        + ": start a server there, or run with --embedded");
                return 3;
            }
            return e.reason() == LockException.Reason.CONFIGURATION ? 2 : 3;
        }
    }
}
