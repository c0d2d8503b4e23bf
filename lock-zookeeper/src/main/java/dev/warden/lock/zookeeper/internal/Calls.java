package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs Curator background operations and bounds what the driver hands to lock-api by the request
 * timeout. Curator reports a result on the thread that receives it (ZooKeeper's event thread), with
 * no hop to another thread; every step that decides (handing a result to lock-api, a deadline, a
 * connection-state change) runs {@linkplain #serially serially}, one at a time, so a grant and a lost
 * connection are still handled in a definite order. Timers, connection states and anything that may
 * wait run on the driver's one thread.
 */
final class Calls {

    /** One Curator background call, given the callback to report to. */
    interface Background {
        void start(BackgroundCallback callback) throws Exception;
    }

    private final ScheduledExecutorService executor;
    /** Bounded calls whose deadline may still need to fail them; see {@link #track}. */
    private final ConcurrentLinkedQueue<Deadline> deadlines = new ConcurrentLinkedQueue<>();
    /** Guarded by {@code deadlines}: whether a sweep is scheduled, and for when. */
    private boolean sweepArmed;
    private long sweepAtNanos;
    /** Held by the step that decides; see {@link #serially}. */
    private final ReentrantLock serial = new ReentrantLock();
    private final Duration timeout;
    private final String servers;

    Calls(ScheduledExecutorService executor, Duration timeout, String servers) {
        this.executor = executor;
        this.timeout = timeout;
        this.servers = servers;
    }

    ScheduledExecutorService executor() {
        return executor;
    }

    /** Starts a background call; the stage completes with Curator's event, whatever its result code. */
    CompletableFuture<CuratorEvent> call(String what, Background background) {
        CompletableFuture<CuratorEvent> result = new CompletableFuture<>();
        try {
            background.start((client, event) -> result.complete(event));
        } catch (Exception e) {
            result.completeExceptionally(translate(what, e));
        }
        return result;
    }

    /** Fails an event with a result code other than {@code ok} (and the codes in {@code accepted}). */
    CuratorEvent check(String what, CuratorEvent event, KeeperException.Code... accepted) {
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.OK) {
            return event;
        }
        for (KeeperException.Code ok : accepted) {
            if (ok == code) {
                return event;
            }
        }
        throw translate(what, KeeperException.create(code, event.getPath()));
    }

    <T> CompletableFuture<T> bounded(String what, CompletableFuture<T> call) {
        return bounded(what, call, late -> { });
    }

    /**
     * Completes with {@code call}'s outcome, serially, or fails {@code UNAVAILABLE} when
     * the request timeout passes first.
     *
     * @param late told of a result that arrived after the deadline failed the call, to undo it
     */
    <T> CompletableFuture<T> bounded(String what, CompletableFuture<T> call, Consumer<T> late) {
        return bounded(what, call, late, value -> value);
    }

    /**
     * Like {@link #bounded(String, CompletableFuture, Consumer)}, and {@code finish} turns the value
     * into the result in the same serial step that completes it, so what it decides
     * (admitting a grant) cannot interleave with a connection-state change.
     */
    <T, R> CompletableFuture<R> bounded(String what, CompletableFuture<T> call, Consumer<T> late, Function<T, R> finish) {
        CompletableFuture<R> result = new CompletableFuture<>();
        track(new Deadline(System.nanoTime() + timeout.toNanos(), result, () -> result.completeExceptionally(new LockException(
                LockException.Reason.UNAVAILABLE, "ZooKeeper at " + servers + " did not answer " + what + " within "
                + timeout.toMillis() + " ms"))));
        call.whenComplete((value, error) -> serially(() -> {
            if (result.isDone()) {
                if (error == null) {
                    late.accept(value);
                }
                return;
            }
            if (error != null) {
                result.completeExceptionally(translate(what, error));
                return;
            }
            R finished;
            try {
                finished = finish.apply(value);
            } catch (RuntimeException e) {
                result.completeExceptionally(translate(what, e));
                return;
            }
            result.complete(finished);
        }));
        return result;
    }

    /**
     * Notes a bounded call's deadline. One timer serves them all (a timer per call would be set and
     * cancelled thousands of times a second, and often wake the driver thread for nothing): it fires
     * at the earliest deadline still pending. Calls mostly end in the order they start, so ended ones
     * are dropped from the front as new ones come.
     */
    private void track(Deadline deadline) {
        deadlines.add(deadline);
        for (int i = 0; i < 8; i++) {
            Deadline first = deadlines.peek();
            if (first == null || first == deadline || !first.result().isDone()) {
                break;
            }
            deadlines.remove(first);
        }
        arm(deadline.atNanos());
    }

    /** Makes sure a sweep runs no later than {@code atNanos}. */
    private void arm(long atNanos) {
        synchronized (deadlines) {
            if (sweepArmed && sweepAtNanos - atNanos <= 0) {
                return;
            }
            sweepArmed = true;
            sweepAtNanos = atNanos;
        }
        if (schedule(this::sweep, Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS) == null) {
            synchronized (deadlines) {
                sweepArmed = false;
            }
        }
    }

    /** On the driver thread: fails the calls past their deadline, and arms for the earliest left. */
    private void sweep() {
        synchronized (deadlines) {
            sweepArmed = false;
        }
        long now = System.nanoTime();
        boolean pending = false;
        long next = 0;
        for (Iterator<Deadline> it = deadlines.iterator(); it.hasNext(); ) {
            Deadline d = it.next();
            if (d.result().isDone()) {
                it.remove();
            } else if (d.atNanos() - now <= 0) {
                it.remove();
                serially(d.expire());
            } else if (!pending || d.atNanos() - next < 0) {
                pending = true;
                next = d.atNanos();
            }
        }
        if (pending) {
            arm(next);
        }
    }

    /** A bounded call's deadline, its result, and how to fail it. */
    private record Deadline(long atNanos, CompletableFuture<?> result, Runnable expire) {
    }

    /**
     * Runs a step that decides, one at a time with every other such step and with connection-state
     * changes: here and now when no other step runs (the usual case: no hop to another thread), else
     * queued to the driver thread, so a thread that holds a lock of lock-api's never waits here for a
     * step that may need that lock.
     */
    void serially(Runnable task) {
        if (serial.tryLock()) {
            try {
                task.run();
            } finally {
                serial.unlock();
            }
            return;
        }
        execute(() -> exclusively(task));
    }

    /**
     * Runs a step that decides on this thread, waiting for the one that runs now: only for the driver
     * thread, which runs nothing that waits for the driver thread, and which keeps its tasks in order.
     */
    void exclusively(Runnable task) {
        serial.lock();
        try {
            task.run();
        } finally {
            serial.unlock();
        }
    }

    /** Schedules on the driver thread; null once it is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        try {
            return executor.schedule(task, delay, unit);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs on the driver thread, or here once it is shut down. */
    void execute(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    LockException translate(String what, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        if (cause instanceof InterruptedException e) {
            return LockException.interrupted("interrupted during " + what, e);
        }
        String message = "ZooKeeper at " + servers + " failed " + what + ": " + cause.getMessage();
        if (cause instanceof KeeperException ke && !transientCode(ke.code())) {
            return new LockException(LockException.Reason.PROTOCOL, message, cause);
        }
        return new LockException(LockException.Reason.UNAVAILABLE, message, cause);
    }

    private static boolean transientCode(KeeperException.Code code) {
        return switch (code) {
            case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, OPERATIONTIMEOUT, NOTREADONLY, REQUESTTIMEOUT,
                    THROTTLEDOP, NONODE -> true;
            default -> false;
        };
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
