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
import java.util.function.Function;

/**
 * Runs Curator background operations and bounds what the driver hands to lock-api by the request
 * timeout. Answers are handled where they arrive, ZooKeeper's event thread, with no hand-off to another
 * thread: lock-api's continuations, which never block, run there too (as they run on the I/O threads of
 * the other drivers). A grant and a lost connection are still handled in a definite order: a grant is
 * decided and handed over, and a connection state taken in, each whole under one monitor
 * ({@link #decided}, {@link #inOrder}). The driver's own thread runs the connection-state listener,
 * timers and the one deadline sweep.
 *
 * <p>Concurrency: {@code decisions} orders decisions and connection states; the deadline queue is
 * concurrent, the sweep's schedule guarded by it; the rest is final.
 */
final class Calls {

    /** One Curator background call, given the callback to report to. */
    interface Background {
        void start(BackgroundCallback callback) throws Exception;
    }

    private final ScheduledExecutorService executor;
    /**
     * Held while a decided call's outcome is decided and handed to lock-api, and while a connection
     * state is taken in: see {@link #decided}. Never held while waiting for anything.
     */
    private final Object decisions = new Object();
    /** Bounded calls whose deadline may still need to fail them; see {@link #track}. */
    private final ConcurrentLinkedQueue<Deadline> deadlines = new ConcurrentLinkedQueue<>();
    /** Guarded by {@code deadlines}: whether a sweep is scheduled, and for when. */
    private boolean sweepArmed;
    private long sweepAtNanos;
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

    /**
     * Completes with {@code call}'s outcome where it arrives, or fails {@code UNAVAILABLE} when the
     * request timeout passes first: for an outcome nothing a connection-state change decides depends on
     * (a release, a read, a renewal's answer, which lock-api ignores once the lease is lost).
     */
    <T> CompletableFuture<T> bounded(String what, CompletableFuture<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Deadline deadline = deadline(() -> result.completeExceptionally(timedOut(what)));
        call.whenComplete((value, error) -> {
            deadline.answered = true;
            if (error != null) {
                result.completeExceptionally(translate(what, error));
            } else {
                result.complete(value);
            }
        });
        return result;
    }

    /**
     * Like {@link #bounded}, and {@code decide} turns the value into the result in the same step that
     * hands it over, holding {@code decisions}, as connection states are taken in ({@link #inOrder}): what
     * it decides (admitting a grant) and what lock-api does with it (registering the lease) happen wholly
     * before or wholly after a connection-state change, whose loss then finds the lease. The deadline
     * fails the result holding it too, so a decision is never handed over after the caller was told of
     * the timeout, nor made for nobody.
     */
    <T, R> CompletableFuture<R> decided(String what, CompletableFuture<T> call, Function<T, R> decide) {
        CompletableFuture<R> result = new CompletableFuture<>();
        Deadline deadline = deadline(() -> {
            synchronized (decisions) {
                result.completeExceptionally(timedOut(what));
            }
        });
        call.whenComplete((value, error) -> {
            deadline.answered = true;
            synchronized (decisions) {
                if (result.isDone()) {
                    return;
                }
                if (error != null) {
                    result.completeExceptionally(translate(what, error));
                    return;
                }
                R decision;
                try {
                    decision = decide.apply(value);
                } catch (RuntimeException e) {
                    result.completeExceptionally(translate(what, e));
                    return;
                }
                result.complete(decision);
            }
        });
        return result;
    }

    /** Takes a connection-state change in between decisions ({@link #decided}), never during one. */
    void inOrder(Runnable stateChange) {
        synchronized (decisions) {
            stateChange.run();
        }
    }

    private LockException timedOut(String what) {
        return new LockException(LockException.Reason.UNAVAILABLE, "ZooKeeper at " + servers + " did not answer " + what
                + " within " + timeout.toMillis() + " ms");
    }

    /** A deadline that runs {@code expire} at the request timeout unless answered first, tracked. */
    private Deadline deadline(Runnable expire) {
        Deadline deadline = new Deadline(System.nanoTime() + timeout.toNanos(), expire);
        track(deadline);
        return deadline;
    }

    /**
     * Notes a bounded call's deadline. One timer serves them all (a timer per call would be set and
     * cancelled thousands of times a second, and often wake the driver thread for nothing): it fires
     * at the earliest deadline still unanswered. Calls mostly end in the order they start, so answered
     * ones are dropped from the front as new ones come.
     */
    private void track(Deadline deadline) {
        deadlines.add(deadline);
        for (int i = 0; i < 8; i++) {
            Deadline first = deadlines.peek();
            if (first == null || first == deadline || !first.answered) {
                break;
            }
            deadlines.remove(first);
        }
        arm(deadline.atNanos);
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

    /**
     * On the driver thread: fails the calls past their deadline and not answered (an answer marks its
     * deadline answered before it completes anything, and a call's result completes once), and arms
     * for the earliest left.
     */
    private void sweep() {
        synchronized (deadlines) {
            sweepArmed = false;
        }
        long now = System.nanoTime();
        boolean pending = false;
        long next = 0;
        for (Iterator<Deadline> it = deadlines.iterator(); it.hasNext(); ) {
            Deadline d = it.next();
            if (d.answered) {
                it.remove();
            } else if (d.atNanos - now <= 0) {
                it.remove();
                d.expire.run();
            } else if (!pending || d.atNanos - next < 0) {
                pending = true;
                next = d.atNanos;
            }
        }
        if (pending) {
            arm(next);
        }
    }

    /** A bounded call's deadline, how to fail it, and whether the call has answered. */
    private static final class Deadline {
        final long atNanos;
        final Runnable expire;
        volatile boolean answered;

        Deadline(long atNanos, Runnable expire) {
            this.atNanos = atNanos;
            this.expire = expire;
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
        if (cause instanceof KeeperException ke && accessDenied(ke.code())) {
            return new LockException(LockException.Reason.ACCESS_DENIED, message + " (the node's ACL does not admit this"
                    + " client's identity: another user created it, or warden.lock.zookeeper.password is wrong)", cause);
        }
        if (cause instanceof KeeperException ke && !transientCode(ke.code())) {
            return new LockException(LockException.Reason.PROTOCOL, message, cause);
        }
        return new LockException(LockException.Reason.UNAVAILABLE, message, cause);
    }

    /** The server refused the client's identity: a wrong digest password, another user's node, a refused ACL. */
    static boolean accessDenied(KeeperException.Code code) {
        return code == KeeperException.Code.NOAUTH || code == KeeperException.Code.INVALIDACL
                || code == KeeperException.Code.AUTHFAILED;
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
