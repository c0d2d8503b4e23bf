package dev.warden.lock.tck.internal;

import dev.warden.lock.tck.LockHistory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link SharedWorkerProcess}es against one name and checks their merged history
 * ({@link LockHistory#shareViolations}): never more units held at once than the limit, and token order
 * between grants that could not be held together.
 */
public final class SharedRecipeRuns {

    /** A writer's weight in the check: more than every reader together. */
    public static final int WRITER = 1_000_000;

    private SharedRecipeRuns() {
    }

    /**
     * What a run saw.
     *
     * @param grants grants per process, as each counted them
     * @param history every process's events
     * @param violations what the check found; empty when the run was clean
     * @param grantsByWeight how many grants of each weight (permits, 1 for a reader, {@link #WRITER}) were seen
     */
    public record Outcome(List<Long> grants, LockHistory history, List<String> violations, Map<Integer, Long> grantsByWeight) {
    }

    /**
     * Starts {@code roles.size()} processes (one roles string each, see {@link SharedWorkerProcess}) for
     * {@code length}, waits for them, and checks the history under {@code limit} units.
     */
    public static Outcome run(String name, List<String> roles, int count, long limit, Duration length,
                              Map<String, ?> settings, java.util.function.Consumer<Runnable> onClose)
            throws IOException, InterruptedException {
        LockHistory history = new LockHistory();
        Map<String, Integer> weights = new ConcurrentHashMap<>();
        List<Process> children = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        List<Path> errors = new ArrayList<>();
        long[] grants = new long[roles.size()];
        for (int p = 0; p < roles.size(); p++) {
            List<String> command = ChildJvm.command(SharedWorkerProcess.class, "-Xss512k");
            command.addAll(List.of(name, roles.get(p), Integer.toString(count), Long.toString(length.toMillis())));
            settings.forEach((k, v) -> command.add(k + "=" + v));
            Path err = Files.createTempFile("warden-worker-", ".err");
            errors.add(err);
            Process child = new ProcessBuilder(command).redirectError(err.toFile()).start();
            onClose.accept(() -> {
                child.destroyForcibly();
                try {
                    Files.deleteIfExists(err);
                } catch (IOException ignored) {
                    // a temporary file left behind is harmless
                }
            });
            children.add(child);
            String holder = "process" + p;
            int index = p;
            Thread reader = new Thread(() -> read(child, holder, name, history, weights, grants, index));
            reader.start();
            readers.add(reader);
        }
        long deadline = length.plusSeconds(120).toMillis();
        List<String> problems = new ArrayList<>();
        for (int p = 0; p < children.size(); p++) {
            Process child = children.get(p);
            if (!child.waitFor(deadline, TimeUnit.MILLISECONDS) || child.exitValue() != 0) {
                child.destroyForcibly();
                problems.add("process" + p + " did not finish cleanly; its standard error:\n" + tail(errors.get(p)));
            }
            readers.get(p).join(10_000);
        }
        problems.addAll(history.shareViolations(weights, limit));
        List<Long> counted = new ArrayList<>();
        for (long g : grants) {
            counted.add(g);
        }
        Map<Integer, Long> byWeight = new java.util.TreeMap<>();
        weights.values().forEach(w -> byWeight.merge(w, 1L, Long::sum));
        return new Outcome(counted, history, problems, byWeight);
    }

    private static void read(Process child, String holder, String name, LockHistory history, Map<String, Integer> weights,
                             long[] grants, int index) {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "G" -> {
                        long token = Long.parseLong(f[1]);
                        weights.put(LockHistory.leaseKey(name, token), Integer.parseInt(f[2]));
                        history.record(new LockHistory.Event(LockHistory.Kind.GRANT, name, token, holder, Long.parseLong(f[3])));
                    }
                    case "R" -> history.record(new LockHistory.Event(LockHistory.Kind.RELEASE, name, Long.parseLong(f[1]),
                            holder, Long.parseLong(f[2])));
                    case "L" -> history.record(new LockHistory.Event(LockHistory.Kind.LOST, name, Long.parseLong(f[1]),
                            holder, Long.parseLong(f[2])));
                    case "DONE" -> grants[index] = Long.parseLong(f[1]);
                    default -> { }
                }
            }
        } catch (IOException ended) {
            // the child was killed
        }
    }

    private static String tail(Path file) {
        try {
            String all = Files.readString(file, StandardCharsets.UTF_8);
            return all.length() <= 4000 ? all : "..." + all.substring(all.length() - 4000);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
