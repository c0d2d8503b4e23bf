package dev.warden.quota.internal;

import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A caller's charge queued for its account's combiner ({@link CombinedCharges}), and its answer: an {@link Outcome},
 * a {@link RuntimeException} or {@link Error}, or {@link #TAKE_OVER}. A blocking caller waits in {@link #take}; an asynchronous one's
 * {@code future} is completed on {@code completions} (never on the combiner's thread, so a callback that charges the
 * same account again cannot wait on itself), and is never handed {@link #TAKE_OVER}. Concurrency: the answer and
 * {@code done} are guarded by this object's monitor; {@code pricedAgain}, {@code alone} and {@code readFirst} are
 * touched only by the combiner of the moment (handed on with the queue under its line's monitor).
 */
final class QueuedCharge {

    /** Handed to the first waiting caller when the combiner goes: it combines next. */
    static final Object TAKE_OVER = new Object();

    final String requestId;
    final Pricing pricing;
    /** Rounds it was priced in whose balance moved; only the combiner touches it. */
    int pricedAgain;
    /** To be charged alone; only the combiner touches it. */
    boolean alone;
    /** To be priced only after its record was read (its pricing failed in a round that did not read); combiner's. */
    boolean readFirst;
    /** Guarded by this. */
    private Object answer;
    /** Guarded by this: an Outcome or exception was given (TAKE_OVER is not an answer). */
    private boolean done;

    /** The line it was queued on; set and read by the caller's own thread (to combine it when handed the turn). */
    CombinedCharges.Line line;
    /** Null for a blocking caller. */
    private final CompletableFuture<Outcome> future;
    private final Executor completions;

    /** A blocking caller's charge. */
    QueuedCharge(String requestId, Pricing pricing) {
        this(requestId, pricing, null, null);
    }

    /** An asynchronous caller's charge: {@code future} completes on {@code completions}. */
    QueuedCharge(String requestId, Pricing pricing, CompletableFuture<Outcome> future, Executor completions) {
        this.requestId = requestId;
        this.pricing = pricing;
        this.future = future;
        this.completions = completions;
    }

    /** Whether a caller's thread waits for this answer (and can take over the combining). */
    boolean blocking() {
        return future == null;
    }

    void answer(Object a) {
        if (future == null) {
            synchronized (this) {
                answer = a;
                done |= a != TAKE_OVER;
                notifyAll();
            }
            return;
        }
        if (a == TAKE_OVER) {
            throw new IllegalStateException("an asynchronous charge cannot take over the combining");
        }
        synchronized (this) {
            if (done) {
                return; // answered once: a second answer (a failure after the outcome) changes nothing
            }
            done = true;
        }
        complete(future, a, completions);
    }

    /**
     * Completes {@code future} with {@code a} (an Outcome or a Throwable) on {@code completions}; here when those are
     * shut, as they are while the engine (or the connector it borrows) closes, rather than never.
     */
    static void complete(CompletableFuture<Outcome> future, Object a, Executor completions) {
        Runnable completion = () -> {
            if (a instanceof Throwable e) {
                future.completeExceptionally(e);
            } else {
                future.complete((Outcome) a);
            }
        };
        try {
            completions.execute(completion);
        } catch (RejectedExecutionException e) {
            completion.run();
        }
    }

    /** Answers with what {@code charge} returns or throws. */
    void answerWith(Supplier<Outcome> charge) {
        try {
            answer((Object) charge.get());
        } catch (RuntimeException e) {
            answer((Object) e);
        }
    }

    synchronized boolean answered() {
        return done;
    }

    /** Waits for the next answer; an interrupt is kept for the caller, since its charge may be on the wire. */
    synchronized Object take() {
        boolean interrupted = false;
        try {
            while (answer == null) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            Object a = answer;
            answer = null;
            return a;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
