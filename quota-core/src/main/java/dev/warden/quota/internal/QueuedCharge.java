package dev.warden.quota.internal;

import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;

import java.util.function.Supplier;

/**
 * A caller's charge queued for its account's combiner ({@link CombinedCharges}), and its answer: an {@link Outcome},
 * a {@link RuntimeException}, or {@link #TAKE_OVER}. Concurrency: the answer and {@code done} are guarded by this
 * object's monitor; {@code pricedAgain}, {@code alone} and {@code readFirst} are touched only by the combiner of the
 * moment (handed on with the queue under its line's monitor).
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

    QueuedCharge(String requestId, Pricing pricing) {
        this.requestId = requestId;
        this.pricing = pricing;
    }

    synchronized void answer(Object a) {
        answer = a;
        done |= a != TAKE_OVER;
        notifyAll();
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
