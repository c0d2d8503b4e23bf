package dev.warden.quota.internal;

import dev.warden.lock.Lease;
import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * Charges of one account combined ({@code warden.quota.combine-charges}), their queue and its hand-offs: the first
 * caller of an account becomes its combiner, takes the account's lock once and serves every charge of the account
 * queued in this engine meanwhile, in rounds ({@link CombinedRound}: each deduction applied only to the exact
 * balance it was priced on, so every applied deduction is priced on the balance it applied to, as under one lock
 * per charge). What differs: the pricing runs on the combiner's thread, not the caller's, and may run again when the
 * balance moved, or for a retry priced before its record was read (its price unused).
 *
 * <p>The combiner lets go of the lock after {@value #ROUNDS_PER_HOLD} rounds and hands what is still queued to the
 * first blocking caller still waiting (its own charge answered), so neither the lock nor one caller's thread is kept
 * for ever. Asynchronous charges ({@code chargeAsync}) queue on the same line; when no blocking caller waits, a
 * charge thread ({@link ChargeThreads}) combines, one hold per turn, then queues its next turn behind the other
 * accounts'. Two charges with one request id never share a round: the later waits for the next.
 *
 * <p>Thread-safe: each account's {@link Line} guards its queue and flags with its own monitor; a {@link QueuedCharge}
 * guards its answer with its own; {@code lines} is concurrent.
 */
final class CombinedCharges {

    /** Charges priced in one round at most. */
    static final int ROUND = Deductions.MAX_PRICED_ON;
    /** Rounds served under one hold of the account's lock. */
    static final int ROUNDS_PER_HOLD = 16;

    private final AccountLocks locks;
    private final CombinedRound rounds;
    private final ChargeThreads threads;
    private final Executor completions;
    private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

    /**
     * @param threads     where an asynchronous charge's combining runs when no blocking caller combines
     * @param completions where asynchronous charges complete
     */
    CombinedCharges(AccountLocks locks, CombinedRound rounds, ChargeThreads threads, Executor completions) {
        this.locks = locks;
        this.rounds = rounds;
        this.threads = threads;
        this.completions = completions;
    }

    Outcome charge(String account, String requestId, Pricing pricing) {
        QueuedCharge self = new QueuedCharge(requestId, pricing);
        Line line = queue(account, self);
        if (line != null) {
            combine(account, line, self);
        }
        while (true) {
            Object answer = self.take();
            if (answer == QueuedCharge.TAKE_OVER) {
                combine(account, self.line, self);
            } else if (answer instanceof RuntimeException e) {
                throw e;
            } else if (answer instanceof Error e) {
                throw e;
            } else {
                return (Outcome) answer;
            }
        }
    }

    /** Queues the charge; a charge thread combines when nobody does. */
    CompletableFuture<Outcome> chargeAsync(String account, String requestId, Pricing pricing) {
        CompletableFuture<Outcome> answer = new CompletableFuture<>();
        QueuedCharge self = new QueuedCharge(requestId, pricing, answer, completions);
        Line line = queue(account, self);
        if (line != null) {
            Combining turn;
            synchronized (line) {
                turn = onChargeThread(account, line);
            }
            threads.execute(turn);
        }
        return answer;
    }

    /**
     * Queues {@code self} on the account's line; the line when nobody combines it (the caller must), else null. A
     * blocking caller also takes over a charge thread's turn that has not started: its thread is waiting anyway, and
     * the charge threads may all be busy with other accounts.
     */
    private Line queue(String account, QueuedCharge self) {
        while (true) {
            Line line = lines.computeIfAbsent(account, Line::new);
            synchronized (line) {
                if (line.retired) {
                    continue; // emptied and removed since: queue on the account's next line
                }
                line.queue.addLast(self);
                self.line = line;
                boolean combine = !line.combining;
                line.combining = true;
                if (!combine && self.blocking() && line.pending != null) {
                    line.pending = null; // that turn, when it runs, finds itself taken over and returns
                    combine = true;
                }
                return combine ? line : null;
            }
        }
    }

    /** With the line's monitor held: the line's next turn, on a charge thread, to be executed once the monitor is let go. */
    private Combining onChargeThread(String account, Line line) {
        Combining turn = new Combining(account, line);
        line.pending = turn;
        return turn;
    }

    /**
     * Serves the line until it is empty, or, for a blocking caller ({@code self}), until its charge is answered and
     * another may go on; a charge thread ({@code self} null) serves one hold at a time and then gives its thread
     * back, so one hot account does not keep a thread from the others. Whatever a hold throws, the combining is
     * passed on or the line retired, so no queued charge is left without a combiner.
     */
    private void combine(String account, Line line, QueuedCharge self) {
        while (true) {
            String first = null;
            Combining next;
            synchronized (line) {
                if (self != null && !self.answered() && Thread.currentThread().isInterrupted() && line.queue.remove(self)) {
                    // Interrupted before its charge was sent: it alone is answered, and the others' turn goes on.
                    self.answer(QuotaException.interrupted("interrupted before the charge of " + account + " was sent;"
                            + " this call sent nothing", new InterruptedException()));
                }
                if (retiredIfEmpty(account, line)) {
                    return;
                }
                next = self == null || !self.answered() ? null : passOn(account, line);
                if (next == null && (self == null || !self.answered())) {
                    first = line.queue.peekFirst().requestId;
                }
            }
            if (first == null) {
                if (next != null) {
                    threads.execute(next);
                }
                return;
            }
            try {
                locks.underLock(account, first, lease -> serve(account, line, lease), () -> serve(account, line, null));
            } catch (Throwable e) {
                failed(line, self, e);
            }
            synchronized (line) {
                if (retiredIfEmpty(account, line)) {
                    return;
                }
                if (self != null && !self.answered()) {
                    continue;
                }
                next = passOn(account, line);
            }
            if (next != null) {
                threads.execute(next);
            }
            return;
        }
    }

    /**
     * With the line's monitor held, the queue not empty: the combining passes on, to a blocking caller still waiting
     * (its thread is there anyway), else to a charge thread, at the back of its queue: that turn is returned, to be
     * executed once the monitor is let go.
     */
    private Combining passOn(String account, Line line) {
        QueuedCharge next = line.queue.stream().filter(QueuedCharge::blocking).findFirst().orElse(null);
        if (next != null) {
            next.answer(QueuedCharge.TAKE_OVER);
            return null;
        }
        return onChargeThread(account, line);
    }

    /** With the line's monitor held: an empty line is retired (a new charge of the account takes a new one). */
    private boolean retiredIfEmpty(String account, Line line) {
        if (!line.queue.isEmpty()) {
            return false;
        }
        line.retired = true;
        line.combining = false;
        line.pending = null;
        lines.remove(account, line);
        return true;
    }

    /**
     * The lock was not taken (or a round failed in a way not tied to its charges), and the queued charges were not
     * sent: an interrupted blocking caller answers only its own charge, since the others were not interrupted; a
     * charge thread is interrupted only by the engine's close, which answers them all {@code CLOSED}; a timeout, a
     * failed or closed lock backend is what every queued charge would have met, and answers them all.
     */
    private void failed(Line line, QueuedCharge self, Throwable e) {
        boolean interrupted = e instanceof QuotaException q && q.reason() == Reason.INTERRUPTED;
        Object answer = e instanceof RuntimeException || e instanceof Error ? e : new QuotaException(Reason.PROTOCOL,
                "the charges' turn failed: " + e, e);
        List<QueuedCharge> answered = new ArrayList<>();
        synchronized (line) {
            if (self != null && interrupted) {
                if (line.queue.remove(self)) {
                    answered.add(self);
                }
            } else {
                answered.addAll(line.queue);
                line.queue.clear();
                if (self == null && interrupted) {
                    answer = closedBeforeSent(line.account);
                }
            }
        }
        Object a = answer;
        answered.forEach(w -> w.answer(a));
    }

    static QuotaException closedBeforeSent(String account) {
        return new QuotaException(Reason.CLOSED, "the quota service closed before this charge of " + account
                + " was sent: this call sent nothing; retry with its request id to learn the request's outcome");
    }

    /** Rounds under one hold (or none: no lock, or the backend failed and the settings say proceed). */
    private Void serve(String account, Line line, Lease lease) {
        // The balance the last round's replies left, if they said: the next round prices on it without reading.
        OptionalLong known = OptionalLong.empty();
        CombinedRound.Answers answers = new CombinedRound.Answers();
        try {
            return rounds(account, line, lease, known, answers);
        } finally {
            answers.give(); // the hold's last round's answers, whatever ended it
        }
    }

    private Void rounds(String account, Line line, Lease lease, OptionalLong known, CombinedRound.Answers answers) {
        for (int round = 0; round < ROUNDS_PER_HOLD; round++) {
            if (Thread.currentThread().isInterrupted()) {
                // Nothing more is sent: a blocking combiner's caller was interrupted (its turn passes on), or the
                // engine closes under a charge thread (the queue is answered CLOSED).
                return null;
            }
            List<QueuedCharge> batch = take(line);
            if (batch.isEmpty()) {
                return null;
            }
            List<QueuedCharge> again = new ArrayList<>();
            try {
                if (lease != null && !lease.isValid()) {
                    QuotaException lost = new QuotaException(Reason.LEASE_INVALID, "the lease of '" + lease.name()
                            + "' (token " + lease.fencingToken() + ") is no longer valid; nothing was sent");
                    batch.forEach(w -> w.answer(lost));
                    return null;
                }
                known = rounds.serve(account, batch, lease, again, known, answers);
            } catch (Throwable e) {
                answers.give(); // the rounds before it applied: those callers get their outcomes, not this failure
                // What was sent may or may not have applied: answered as one charge alone would be, with the error;
                // a retry with the request id answers as the first try did. Taken off the queue, the batch is
                // answered here or never.
                Object answer = e instanceof RuntimeException || e instanceof Error ? e
                        : new QuotaException(Reason.PROTOCOL, "a round of " + account + " failed: " + e, e);
                batch.stream().filter(w -> !w.answered()).forEach(w -> w.answer(answer));
                return null;
            }
            if (!again.isEmpty()) {
                synchronized (line) {
                    for (int i = again.size() - 1; i >= 0; i--) {
                        line.queue.addFirst(again.get(i));
                    }
                }
            }
        }
        return null;
    }

    /** Up to {@link #ROUND} queued charges with distinct request ids, in queue order; the others stay queued. */
    private static List<QueuedCharge> take(Line line) {
        List<QueuedCharge> batch = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        synchronized (line) {
            Iterator<QueuedCharge> it = line.queue.iterator();
            while (it.hasNext() && batch.size() < ROUND) {
                QueuedCharge w = it.next();
                if (ids.add(w.requestId)) {
                    batch.add(w);
                    it.remove();
                }
            }
        }
        return batch;
    }

    /** A charge thread's turn at combining a line; abandoned (its charges answered CLOSED) when the engine closes first. */
    final class Combining implements ChargeThreads.Task {
        private final String account;
        private final Line line;

        Combining(String account, Line line) {
            this.account = account;
            this.line = line;
        }

        @Override
        public void run() {
            synchronized (line) {
                if (line.pending != this) {
                    return; // a blocking caller took this turn over before it started
                }
                line.pending = null;
            }
            combine(account, line, null);
        }

        /** The engine closed before this ran: every charge still queued on the line is answered; nothing was sent. */
        @Override
        public void abandon() {
            List<QueuedCharge> answered;
            synchronized (line) {
                if (line.pending != this) {
                    return; // taken over: the blocking caller that took it answers the queue
                }
                answered = new ArrayList<>(line.queue);
                line.queue.clear();
                retiredIfEmpty(account, line);
            }
            QuotaException closed = closedBeforeSent(account);
            answered.forEach(w -> w.answer(closed));
        }
    }

    /** One account's queue of charges in this engine. Guarded by its own monitor. */
    static final class Line {
        final String account;
        /** The charge thread's turn waiting to start, if the combining is one; a blocking caller may take it over. */
        Combining pending;

        Line(String account) {
            this.account = account;
        }

        final ArrayDeque<QueuedCharge> queue = new ArrayDeque<>();
        /** Whether a caller combines for this line now (one at most). */
        boolean combining;
        /** Emptied and removed from {@code lines}: a new charge takes a new line. */
        boolean retired;
    }
}
