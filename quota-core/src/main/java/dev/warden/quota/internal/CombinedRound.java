package dev.warden.quota.internal;

import dev.warden.lock.Lease;
import dev.warden.quota.Amount;
import dev.warden.quota.AmountProblem;
import dev.warden.quota.Outcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * One round of {@link CombinedCharges}, its protocol: the batch's idempotency records and the balance read together
 * (one round trip); each charge priced in turn on the balance the charges before it leave; the deductions sent in
 * one {@code deduct.lua} call, each applied only to the exact balance it was priced on. A round after one whose
 * replies said what the balance became skips the reads: it prices on that balance, and the script answers a charge
 * whose request id the account already used with that record ({@code recorded}) before comparing anything, so a
 * retry still answers its first outcome; one round trip instead of two. A balance that moved meanwhile is refused
 * as any stale price is. A deduction refused so is priced again in a later round; one refused
 * {@value #PRICED_AGAIN} times is charged alone. Stateless between calls: the balance a round leaves is returned
 * to the caller, which passes it to the next.
 */
final class CombinedRound {

    /** Rounds a charge whose balance moved is priced in before it is charged alone. */
    static final int PRICED_AGAIN = 3;

    /** A charge alone, as without combining: read, price, deduct (under {@code lease}, or unfenced when null). */
    interface Single {
        Outcome charge(String account, String requestId, Pricing pricing, Lease lease);
    }

    /** How a round reads the account's balance (the service's own read, which knows split accounts). */
    interface BalanceRead {
        OptionalLong balance(String account);
    }

    private final Deductions deductions;
    private final BalanceRead balances;
    private final Single single;
    private final long syncWaitNanos;
    private final String endpoint;

    CombinedRound(Deductions deductions, BalanceRead balances, Single single, long syncWaitNanos, String endpoint) {
        this.deductions = deductions;
        this.balances = balances;
        this.single = single;
        this.syncWaitNanos = syncWaitNanos;
        this.endpoint = endpoint;
    }

    /**
     * One round: answers each charge of the batch, or adds it to {@code again} to be priced in a later round. Priced
     * on {@code known} without reading when it is present and no charge of the batch needs its record read first.
     *
     * @return the balance the round's replies say the account has now, if they say
     */
    OptionalLong serve(String account, List<QueuedCharge> batch, Lease lease, List<QueuedCharge> again, OptionalLong known,
                       Answers answers) {
        if (deductions.knownSplit(account)) {
            answers.give();
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
            Read read = readRound(account, batch, again, answers);
            if (read == null) {
                return OptionalLong.empty();
            }
            recorded = read.records();
            balance = read.balance();
        }
        return price(account, batch, lease, again, recorded, balance, answers);
    }

    /**
     * The answers of a round's replies to asynchronous charges, given once the next round is on the wire (or the hold
     * ends), so their completions run while Redis runs that round instead of before it is sent; blocking callers are
     * answered at once. Touched only by the combiner of the
     * moment; {@link CombinedCharges} gives what is left when a hold ends, and before answering a failed round.
     */
    static final class Answers {
        private final List<QueuedCharge> to = new ArrayList<>();
        private final List<Object> what = new ArrayList<>();

        void add(QueuedCharge w, Object answer) {
            if (w.blocking()) {
                // A blocking caller answered late comes back late: its next charge misses the rounds it could join
                // (measured: blocking rows 25-30 % slower deferred). Only stages wait for the next send.
                w.answer(answer);
                return;
            }
            to.add(w);
            what.add(answer);
        }

        void give() {
            for (int i = 0; i < to.size(); i++) {
                to.get(i).answer(what.get(i));
            }
            to.clear();
            what.clear();
        }
    }

    /** What a round read: the batch's records, in order, and the balance. */
    private record Read(List<String> records, long balance) {
    }

    /** The records of the batch and the balance, in one round trip; null when the batch was answered or queued again. */
    private Read readRound(String account, List<QueuedCharge> batch, List<QueuedCharge> again, Answers answers) {
        // The records and the balance on the wire at once: one round trip.
        CompletableFuture<List<String>> records = deductions.sendRecordReads(account,
                batch.stream().map(w -> w.requestId).toList());
        answers.give();
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
    private OptionalLong price(String account, List<QueuedCharge> batch, Lease lease, List<QueuedCharge> again,
                               List<String> recorded, long balance, Answers answers) {
        long token = lease == null ? -1 : lease.fencingToken();
        OptionalLong after = OptionalLong.of(balance); // nothing applied: as read (or as the last round left it)
        List<QueuedCharge> priced = new ArrayList<>(batch.size());
        List<Deductions.PricedDeduction> deductionsOfRound = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            QueuedCharge w = batch.get(i);
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
            } catch (RuntimeException | Error e) {
                if (recorded == null) {
                    readFirst(w, again); // a retry answers as its first charge did, whatever its pricing does now
                } else {
                    w.answer(e); // as a charge alone throws its pricing's exception (or error) to its caller
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
            CompletableFuture<List<Object>> sent = deductions.sendPricedOn(account, deductionsOfRound, token);
            answers.give(); // the last round's callers, while Redis runs this one
            List<Object> replies = Errors.await(sent, syncWaitNanos, endpoint, "deduct " + account);
            if (replies.size() != priced.size()) {
                throw new QuotaException(Reason.PROTOCOL, "unexpected script reply " + replies);
            }
            for (int i = 0; i < priced.size(); i++) {
                QueuedCharge w = priced.get(i);
                @SuppressWarnings("unchecked")
                List<Object> reply = replies.get(i) instanceof List<?> l ? (List<Object>) l : null;
                after = balanceNow(reply, after);
                if (Deductions.isRecorded(reply)) {
                    answers.add(w, Deductions.recordedReply(reply, account)); // a retry: its first answer
                } else if (Deductions.isMoved(reply) || Buckets.isDraining(reply)) {
                    w.pricedAgain++;
                    again.add(w);
                } else if (Buckets.isSplit(reply)) {
                    deductions.learnedSplit(account, reply);
                    again.add(w);
                    after = OptionalLong.empty();
                } else {
                    answers.add(w, deductions.outcome(reply, account, token));
                }
            }
        }
        if (priced.isEmpty() || again.stream().anyMatch(w -> w.alone)) {
            answers.give(); // none sent to overlap them with, or a charge alone (round trips) comes first
        }
        // Charged alone: after the others, under the same hold (with the lease's token, or unfenced without one).
        for (Iterator<QueuedCharge> it = again.iterator(); it.hasNext(); ) {
            QueuedCharge w = it.next();
            if (w.alone) {
                it.remove();
                w.answerWith(() -> single.charge(account, w.requestId, w.pricing, lease));
                after = OptionalLong.empty(); // charged alone: its balance was not told here
            }
        }
        return after;
    }

    /** Its pricing failed in a round whose records were not read: priced again after a read, which may answer it. */
    private static void readFirst(QueuedCharge w, List<QueuedCharge> again) {
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
}
