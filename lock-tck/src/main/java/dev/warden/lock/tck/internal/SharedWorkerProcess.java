package dev.warden.lock.tck.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker JVM for the multi-process history check: its threads take a semaphore's permits or a read-write
 * lock's sides in a loop until a deadline, and it prints each grant, release and loss with the time on
 * the machine's monotonic clock ({@code System.nanoTime()} is {@code CLOCK_MONOTONIC} on Linux, one clock
 * for every process of the machine), so the parent merges every process's events into one history.
 *
 * <p>Arguments: the name, the roles (one letter per thread: {@code 1}..{@code 9} permits of a semaphore,
 * {@code r} reader, {@code w} writer, {@code x} holder of the lock of that name), the semaphore's count (ignored for roles r/w/x), the run's length in
 * milliseconds, then {@code key=value} settings. Lines: {@code G <token> <weight> <nanos>},
 * {@code R <token> <nanos>}, {@code L <token> <nanos>}, and {@code DONE <grants>} at the end.
 */
public final class SharedWorkerProcess {

    private SharedWorkerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String name = args[0];
        String roles = args[1];
        int count = Integer.parseInt(args[2]);
        long runNanos = Duration.ofMillis(Long.parseLong(args[3])).toNanos();
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 4; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        settings.put("warden.lock.connect-timeout", HolderProcess.CHILD_CONNECT_TIMEOUT);
        PrintStream out = System.out;
        long[] grants = new long[1];
        try (LockClient client = LockClient.create(settings)) {
            long end = System.nanoTime() + runNanos;
            List<Thread> threads = new ArrayList<>();
            for (char role : roles.toCharArray()) {
                Thread t = new Thread(() -> {
                    while (System.nanoTime() - end < 0) {
                        Lease lease = take(client, name, role, count);
                        long token = lease.fencingToken();
                        lease.onLost(lost -> line(out, "L " + token + " "
                                + (System.nanoTime() - Duration.between(lost.lastValidAt(), Instant.now()).toNanos())));
                        line(out, "G " + token + " " + weight(role) + " " + System.nanoTime());
                        synchronized (grants) {
                            grants[0]++;
                        }
                        Thread.yield();
                        line(out, "R " + token + " " + System.nanoTime());
                        lease.release();
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
        }
        synchronized (grants) {
            line(out, "DONE " + grants[0]);
        }
    }

    /** The units a role holds: permits, 1 for a reader or a lock's holder, {@link SharedRecipeRuns#WRITER} for a writer. */
    static int weight(char role) {
        return role == 'r' || role == 'x' ? 1 : role == 'w' ? SharedRecipeRuns.WRITER : role - '0';
    }

    private static Lease take(LockClient client, String name, char role, int count) {
        return switch (role) {
            case 'r' -> client.readWriteLock(name).readLock().acquire();
            case 'w' -> client.readWriteLock(name).writeLock().acquire();
            case 'x' -> client.lock(name).acquire();
            default -> client.semaphore(name, count).acquire(role - '0');
        };
    }

    private static void line(PrintStream out, String text) {
        synchronized (out) {
            out.println(text);
            out.flush();
        }
    }
}
