package dev.warden.quota.internal;

import dev.warden.lock.Lease;
import dev.warden.quota.Amount;
import dev.warden.quota.AmountProblem;
import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Charges of one account combined ({@code warden.quota.combine-charges}): the first caller of an account becomes its
 * combiner, takes the account's lock once and serves every charge of the account queued in this engine meanwhile,
 * in rounds: the charges' idempotency records and the balance read together; then each charge priced in turn on
 * the balance the charges before it leave, and the deductions sent together, each applied by {@code deduct.lua}
 * only to the exact balance it was priced on. A round after one whose replies said what the balance became skips
 * the reads: it prices on that balance and the script answers a charge whose request id it already holds with
 * that record ({@code recorded}), before comparing anything; one round trip instead of two. Should the balance
 * have moved meanwhile, the script refuses as for any stale price. A deduction whose balance moved (someone deducted
 * without the lock) is priced again in a later round; one that moved {@value #PRICED_AGAIN} times is charged alone.
 *
 * <p>Every applied deduction is thus priced on the balance it applied to, as under one lock per charge. What
 * differs: the pricing runs on the combiner's thread, not the caller's, and may run again when the balance moved.
 * The combiner lets go of the lock after {@value #ROUNDS_PER_HOLD} rounds and hands what is still queued to the
 * first caller still waiting (its own charge answered), so neither the lock nor one caller's thread is kept for
 * ever. Two charges with one request id never share a round: the later waits for the next, where its record is read.
 *
 * <p>Thread-safe: each account's {@link Line} guards its queue and flags with its own monitor; a {@link Waiting}
 * guards its answer with its own; {@code lines} is concurrent.
 */
final class CombinedCharges {

    /** Charges priced in one round at most. */
    static final int ROUND = Deductions.MAX_PRICED_ON;
    /** Rounds served under one hold of the account's lock. */
    static final int ROUNDS_PER_HOLD = 16;
    /** Rounds a charge whose balance moved is priced in before it is charged alone. */
    static final int PRICED_AGAIN = 3;

    /** A charge alone, as without combining: read, price, deduct (under {@code lease}, or unfenced when null). */
    interface Single {
        Outcome charge(String account, String requestId, Pricing pricing, Lease lease);
    }

    private final AccountLocks locks;
    private final Deductions deductions;
    private final BalanceRead balances;
    private final Single single;
    private final long syncWaitNanos;
    private final String endpoint;
    private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

    /** How a round reads the account's balance (the service's own read, which knows split accounts). */
    interface BalanceRead {
        OptionalLong balance(String account);
    }

    CombinedCharges(AccountLocks locks, Deductions deductions, BalanceRead balances, Single single, long syncWaitNanos,
                    String endpoint) {
        this.locks = locks;
        this.deductions = deductions;
        this.balances = balances;
        this.single = single;
        this.syncWaitNanos = syncWaitNanos;
        this.endpoint = endpoint;
    }

    Outcome charge(String account, String requestId, Pricing pricing) {
        Waiting self = new Waiting(requestId, pricing);
        Line line;
        boolean combine;
        while (true) {
            line = lines.computeIfAbsent(account, a -> new Line());
            synchronized (line) {
                if (line.retired) {
                    continue; // emptied and removed since: queue on the account's next line
                }
                line.queue.addLast(self);
                combine = !line.combining;
                line.combining = true;
            }
            break;
        }
        if (combine) {
            combine(account, line, self);
        }
        while (true) {
            Object answer = self.take();
            if (answer == TAKE_OVER) {
                combine(account, line, self);
            } else if (answer instanceof RuntimeException e) {
                throw e;
            } else {
                return (Outcome) answer;
            }
        }
    }

    /** Serves the line until it is empty, or until this caller's charge is answered and another may go on. */
    private void combine(String account, Line line, Waiting self) {
        while (true) {
            String first;
            synchronized (line) {
                if (retiredIfEmpty(account, line)) {
                    return;
                }
                first = line.queue.peekFirst().requestId;
            }
            try {
                locks.underLock(account, first, lease -> serve(account, line, lease), () -> serve(account, line, null));
            } catch (RuntimeException e) {
                failed(line, self, e);
            }
            synchronized (line) {
                if (retiredIfEmpty(account, line)) {
                    return;
                }
                if (self.answered()) {
                    line.queue.peekFirst().answer(TAKE_OVER); // the combining passes on: this caller has its answer
                    return;
                }
            }
        }
    }

    /** With the line's monitor held: an empty line is retired (a new charge of the account takes a new one). */
    private boolean retiredIfEmpty(String account, Line line) {
        if (!line.queue.isEmpty()) {
            return false;
        }
        line.retired = true;
        line.combining = false;
        lines.remove(account, line);
        return true;
    }

    /**
     * The lock was not taken (or a round failed in a way not tied to its charges): an interrupted combiner answers
     * only its own charge, since the others were not interrupted; a timeout, a failed or closed lock backend is what
     * every queued charge would have met, and answers them all.
     */
    private void failed(Line line, Waiting self, RuntimeException e) {
        List<Waiting> answered = new ArrayList<>();
        synchronized (line) {
            if (e instanceof QuotaException q && q.reason() == Reason.INTERRUPTED) {
                if (line.queue.remove(self)) {
                    answered.add(self);
                }
            } else {
                answered.addAll(line.queue);
                line.queue.clear();
            }
        }
        answered.forEach(w -> w.answer(e));
    }

    /** Rounds under one hold (or none: no lock, or the backend failed and the settings say proceed). */
    private Void serve(String account, Line line, Lease lease) {
        // The balance the last round's replies left, if they said: the next round prices on it without reading.
        OptionalLong known = OptionalLong.empty();
        for (int round = 0; round < ROUNDS_PER_HOLD; round++) {
            List<Waiting> batch = take(line);
            if (batch.isEmpty()) {
                return null;
            }
            if (lease != null && !lease.isValid()) {
                QuotaException lost = new QuotaException(Reason.LEASE_INVALID, "the lease of '" + lease.name()
                        + "' (token " + lease.fencingToken() + ") is no longer valid; nothing was sent");
                batch.forEach(w -> w.answer(lost));
                return null;
            }
            List<Waiting> again = new ArrayList<>();
            try {
                known = round(account, batch, lease, again, known);
            } catch (RuntimeException e) {
                // What was sent may or may not have applied: answered as one charge alone would be, with the error;
                // a retry with the request id answers as the first try did.
                batch.stream().filter(w -> !w.answered()).forEach(w -> w.answer(e));
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
    private static List<Waiting> take(Line line) {
        List<Waiting> batch = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        synchronized (line) {
            Iterator<Waiting> it = line.queue.iterator();
            while (it.hasNext() && batch.size() < ROUND) {
                Waiting w = it.next();
                if (ids.add(w.requestId)) {
                    batch.add(w);
                    it.remove();
                }
            }
        }
        return batch;
    }

    /**
     * One round: answers each charge of the batch, or adds it to {@code again} to be priced in a later round. Priced
     * on {@code known} without reading when it is present and no charge of the batch needs its record read first.
     *
     * @return the balance the round's replies say the account has now, if they say
     */
    private OptionalLong round(String account, List<Waiting> batch, Lease lease, List<Waiting> again, OptionalLong known) {
        if (deductions.knownSplit(account)) {
            // A split account's deduction may take several calls: each charge alone, in turn, under the same hold.
            batch.forEach(w -> w.answerWith(() -> single.charge(account, w.requestId, w.pricing, lease)));
            return OptionalLong.empty();
        }
        boolean unread = known.isPresent() && batch.stream().noneMatch(w -> w.readFirst);
        List<String> recorded;
        long balance;
        if (unread) {
            recorded = null;
            balance = known.getAsLong();
        } else {
            Read read = readRound(account, batch, again);
            if (read == null) {
                return OptionalLong.empty();
            }
            recorded = read.records();
            balance = read.balance();
        }
        return price(account, batch, lease, again, recorded, balance);
    }

    /** What a round read: the batch's records, in order, and the balance. */
    private record Read(List<String> records, long balance) {
    }

    /** The records of the batch and the balance, in one round trip; null when the batch was answered or queued again. */
    private Read readRound(String account, List<Waiting> batch, List<Waiting> again) {
        // The records and the balance on the wire at once: one round trip.
        CompletableFuture<List<String>> records = deductions.sendRecordReads(account,
                batch.stream().map(w -> w.requestId).toList());
        OptionalLong read = balances.balance(account);
        if (read.isEmpty() || deductions.knownSplit(account)) {
            records.cancel(false);
            if (read.isEmpty()) {
                batch.forEach(w -> w.answer(new Outcome.AccountNotFound(account)));
            } else {
                again.addAll(batch); // learned split by the read: the next round charges each alone
            }
            return null;
        }
        return new Read(Errors.await(records, syncWaitNanos, endpoint, "read the records of " + account), read.getAsLong());
    }

    /**
     * Prices the batch on {@code balance} and sends its deductions; {@code recorded}: the batch's records, or null
     * when they were not read (the script answers a recorded request id then).
     */
    private OptionalLong price(String account, List<Waiting> batch, Lease lease, List<Waiting> again,
                               List<String> recorded, long balance) {
        long token = lease == null ? -1 : lease.fencingToken();
        OptionalLong after = OptionalLong.of(balance); // nothing applied: as read (or as the last round left it)
        List<Waiting> priced = new ArrayList<>(batch.size());
        List<Deductions.PricedDeduction> deductionsOfRound = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            Waiting w = batch.get(i);
            Optional<Outcome> first = recorded == null ? Optional.empty() : Deductions.recorded(recorded.get(i), account);
            if (first.isPresent()) {
                w.answer(first.get()); // a retry: its first answer, not a second price
                continue;
            }
            w.readFirst = false;
            if (w.pricedAgain >= PRICED_AGAIN) {
                again.add(w);
                w.alone = true;
                continue;
            }
            long price;
            try {
                price = w.pricing.price(balance);
            } catch (RuntimeException e) {
                if (recorded == null) {
                    readFirst(w, again); // a retry answers as its first charge did, whatever its pricing does now
                } else {
                    w.answer(e); // as a charge alone throws its pricing's exception to its caller
                }
                continue;
            }
            Optional<AmountProblem> problem = Amount.problem(price);
            if (problem.isPresent()) {
                if (recorded == null) {
                    readFirst(w, again);
                } else {
                    w.answer(new Outcome.InvalidAmount(problem.get()));
                }
                continue;
            }
            priced.add(w);
            deductionsOfRound.add(new Deductions.PricedDeduction(w.requestId, price, balance));
            if (price <= balance) {
                balance -= price; // what it leaves, if it applies: the next charge is priced on that
            }
        }
        if (!priced.isEmpty()) {
            List<Object> replies = Errors.await(deductions.sendPricedOn(account, deductionsOfRound, token), syncWaitNanos,
                    endpoint, "deduct " + account);
            if (replies.size() != priced.size()) {
                throw new QuotaException(Reason.PROTOCOL, "unexpected script reply " + replies);
            }
            for (int i = 0; i < priced.size(); i++) {
                Waiting w = priced.get(i);
                @SuppressWarnings("unchecked")
                List<Object> reply = replies.get(i) instanceof List<?> l ? (List<Object>) l : null;
                after = balanceNow(reply, after);
                if (Deductions.isRecorded(reply)) {
                    w.answer(Deductions.recordedReply(reply, account)); // a retry: its first answer
                } else if (Deductions.isMoved(reply) || Buckets.isDraining(reply)) {
                    w.pricedAgain++;
                    again.add(w);
                } else if (Buckets.isSplit(reply)) {
                    deductions.learnedSplit(account, reply);
                    again.add(w);
                    after = OptionalLong.empty();
                } else {
                    w.answer(deductions.outcome(reply, account, token));
                }
            }
        }
        // Charged alone: after the others, under the same hold (with the lease's token, or unfenced without one).
        for (Iterator<Waiting> it = again.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (w.alone) {
                it.remove();
                w.answerWith(() -> single.charge(account, w.requestId, w.pricing, lease));
                after = OptionalLong.empty(); // charged alone: its balance was not told here
            }
        }
        return after;
    }

    /** Its pricing failed in a round whose records were not read: priced again after a read, which may answer it. */
    private static void readFirst(Waiting w, List<Waiting> again) {
        w.readFirst = true;
        again.add(w);
    }

    /**
     * The balance after {@code reply}, where it says ({@code applied}: what it left; {@code insufficient},
     * {@code moved}: what it found); otherwise {@code before}, as a reply that wrote nothing leaves the balance as it
     * was. A stale {@code before} costs a {@code moved}, never money: every deduction is checked on the balance.
     */
    private static OptionalLong balanceNow(List<Object> reply, OptionalLong before) {
        if (reply == null || reply.size() < 2 || !(reply.get(0) instanceof String status)
                || !(reply.get(1) instanceof String value)) {
            return before;
        }
        return switch (status) {
            case "applied", "insufficient", "moved" -> parsed(value, before);
            default -> before;
        };
    }

    private static OptionalLong parsed(String value, OptionalLong otherwise) {
        try {
            return OptionalLong.of(Long.parseLong(value));
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    /** Handed to the first waiting caller when the combiner goes: it combines next. */
    private static final Object TAKE_OVER = new Object();

    /** One account's queue of charges in this engine. Guarded by its own monitor. */
    private static final class Line {
        final ArrayDeque<Waiting> queue = new ArrayDeque<>();
        /** Whether a caller combines for this line now (one at most). */
        boolean combining;
        /** Emptied and removed from {@code lines}: a new charge takes a new line. */
        boolean retired;
    }

    /** A caller's charge and its answer: an {@link Outcome}, a {@link RuntimeException}, or {@link #TAKE_OVER}. */
    private static final class Waiting {
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

        Waiting(String requestId, Pricing pricing) {
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
}
