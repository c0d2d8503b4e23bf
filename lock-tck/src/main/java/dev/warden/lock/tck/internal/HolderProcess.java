package dev.warden.lock.tck.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A holder in its own JVM, so a test can kill it (SIGKILL) or freeze it (SIGSTOP) the way a real
 * process dies: its connection and its renewals go with it. Arguments: the lock name, then
 * {@code key=value} settings. Prints {@code GRANTED <token>} once it holds the lock, then waits, and
 * {@code LOST <reason>} if its lease is lost.
 */
public final class HolderProcess {

    /**
     * How long a child may take to connect. A fresh JVM on a loaded two-core machine can spend most
     * of the default 5 s loading Netty before its first connection; its start-up is not what the
     * tests measure, so the child always gets this much, whatever the settings it is given.
     */
    static final String CHILD_CONNECT_TIMEOUT = "60s";

    /**
     * The setting (outside {@code warden.lock.}, so the client ignores it) that says what the child takes:
     * {@code lock} (the default), {@code permits:<n>/<count>} of a semaphore, or {@code read} of a
     * read-write lock.
     */
    public static final String TAKE = "warden-holder.take";

    /** How long {@link #start} waits for the child's grant. */
    private static final Duration GRANT_DEADLINE = Duration.ofSeconds(90);

    /**
     * A started child that holds {@code name}; {@code out} reads what it prints after its grant
     * ({@code LOST <reason>} once its lease is lost).
     */
    public record Child(Process process, long token, BufferedReader out) {

        /** The child's next line, or null when none came within {@code wait}. */
        public String nextLine(Duration wait) throws InterruptedException {
            try {
                return CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }).get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                return null;
            }
        }

        /** Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to the child with {@code kill}. */
        public void signal(String signal) throws IOException, InterruptedException {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).redirectErrorStream(true).start();
            String said = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: " + said);
            }
        }
    }

    private HolderProcess() {
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        // Over the test's own: those settings are its clients', sized for a JVM that is already warm.
        settings.put("warden.lock.connect-timeout", CHILD_CONNECT_TIMEOUT);
        String take = settings.getOrDefault(TAKE, "lock");
        LockClient client = LockClient.create(settings);
        Lease lease;
        if (take.startsWith("permits:")) {
            String[] nOf = take.substring("permits:".length()).split("/");
            lease = client.semaphore(args[0], Integer.parseInt(nOf[1])).acquire(Integer.parseInt(nOf[0]));
        } else if (take.equals("read")) {
            lease = client.readWriteLock(args[0]).readLock().acquire();
        } else {
            lease = client.lock(args[0]).acquire();
        }
        lease.onLost(lost -> {
            System.out.println("LOST " + lost.reason());
            System.out.flush();
        });
        System.out.println("GRANTED " + lease.fencingToken());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /**
     * Starts a child that takes {@code name} with {@code settings} and returns once it holds it.
     * {@code onClose} receives the child's clean-up (a forced kill) before this waits, so a failed
     * start leaves no process behind. A child that dies before its grant fails with what it wrote
     * to its standard error, which is otherwise kept out of the test's output.
     */
    public static Child start(String name, Map<String, ?> settings, java.util.function.Consumer<Runnable> onClose)
            throws IOException, InterruptedException {
        List<String> command = ChildJvm.command(HolderProcess.class);
        command.add(name);
        settings.forEach((k, v) -> command.add(k + "=" + v));
        Path errors = Files.createTempFile("warden-holder-", ".err");
        Process child = new ProcessBuilder(command).redirectError(errors.toFile()).start();
        onClose.accept(() -> {
            child.destroyForcibly();
            try {
                Files.deleteIfExists(errors);
            } catch (IOException ignored) {
                // a temporary file left behind is harmless
            }
        });
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String granted;
        try {
            granted = line.get(GRANT_DEADLINE.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            granted = null;
        }
        if (granted == null || !granted.startsWith("GRANTED ")) {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("the holder process did not report its grant within " + GRANT_DEADLINE.toSeconds()
                    + " s (first line: " + granted + "); its standard error:\n" + tail(errors));
        }
        return new Child(child, Long.parseLong(granted.substring("GRANTED ".length()).trim()), out);
    }

    private static String tail(Path file) {
        try {
            String all = Files.readString(file, StandardCharsets.UTF_8);
            return all.length() <= 4000 ? all : "..." + all.substring(all.length() - 4000);
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
