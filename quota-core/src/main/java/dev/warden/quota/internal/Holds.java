package dev.warden.quota.internal;

import dev.warden.quota.Amount;
import dev.warden.quota.AmountProblem;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.InvalidIdException.Field;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.redis.Ids;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.ScriptRunner;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Authorisation holds on {@code holds.lua}: builds each call's keys and arguments and reads its reply.
 * The time every call passes to the script is this class's {@link Clock}'s (the engine's seam: tests
 * give a virtual one); the script never reads the server's clock.
 *
 * <p>Thread-safe: immutable.
 */
final class Holds {

    /** Due holds a hold, capture or release expires first, so one call stays short. */
    static final int SWEEP_ON_TOUCH = 16;
    /** Due holds one sweep call expires; {@link #expireAll} calls again while more are due. */
    static final int SWEEP_BATCH = 500;

    private final KeyLayout layout;
    private final ScriptRunner scripts;
    private final RedisConnection commands;
    private final String retentionMillis;
    private final Clock clock;

    Holds(KeyLayout layout, ScriptRunner scripts, RedisConnection commands, Duration retention, Clock clock) {
        this.layout = layout;
        this.scripts = scripts;
        this.commands = commands;
        this.retentionMillis = Long.toString(retention.toMillis());
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    CompletableFuture<HoldOutcome> hold(String account, long amount, String holdId, Duration expiry) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        Objects.requireNonNull(expiry, "expiry");
        if (expiry.isNegative() || expiry.isZero() || expiry.toMillis() == 0) {
            throw new IllegalArgumentException("a hold's expiry must be at least 1 ms, was " + expiry);
        }
        Optional<AmountProblem> problem = Amount.problem(amount);
        if (problem.isPresent()) {
            return CompletableFuture.completedFuture(new HoldOutcome.InvalidAmount(problem.get()));
        }
        long now = clock.millis();
        long expires;
        try {
            expires = Math.addExact(now, expiry.toMillis());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("a hold's expiry of " + expiry + " is beyond any clock", e);
        }
        return call("hold", account, holdId, Long.toString(amount), Long.toString(expires), now);
    }

    CompletableFuture<HoldOutcome> capture(String account, String holdId, long amount) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        Optional<AmountProblem> problem = Amount.problem(amount);
        if (problem.isPresent()) {
            return CompletableFuture.completedFuture(new HoldOutcome.InvalidAmount(problem.get()));
        }
        return call("capture", account, holdId, Long.toString(amount), "", clock.millis());
    }

    CompletableFuture<HoldOutcome> release(String account, String holdId) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        return call("release", account, holdId, "", "", clock.millis());
    }

    /**
     * What a charge on a hold captures: {@code pricing}'s price of the held amount while the hold is held
     * and not yet due on this engine's clock; otherwise the amount its first capture would have been given
     * again, so the capture script answers as it answers a retry (duplicate, already released, expired).
     * Read through the script, so a partition without its marker is DATA_LOST, never "unknown hold". The
     * price is asked on the caller's thread.
     *
     * @return the amount to capture, or the outcome that ends the charge ({@link HoldOutcome.UnknownHold},
     *         {@link HoldOutcome.AccountNotFound})
     */
    Either amountToCapture(String account, String holdId, dev.warden.quota.Pricing pricing, long waitNanos, String endpoint) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.holdIndex(p), layout.journal(p), layout.accountKey(account),
                layout.holdKey(account, holdId)};
        List<Object> reply = Errors.await(scripts.run(commands, Scripts.of(Scripts.Script.HOLDS), keys, "read",
                Long.toString(clock.millis()), retentionMillis, layout.markerValue(), "1", account, holdId, "", ""),
                waitNanos, endpoint, "read a hold of " + account);
        String status = Replies.text(reply, 0);
        switch (status) {
            case "unknown_hold" -> {
                return new Either(0, new HoldOutcome.UnknownHold(holdId));
            }
            case "not_found" -> {
                return new Either(0, new HoldOutcome.AccountNotFound(account));
            }
            case "hold" -> {
            }
            default -> throw Replies.notAnOutcome(reply, status, account, layout.marker(p));
        }
        String state = Replies.text(reply, 1);
        long held = parse(Replies.text(reply, 2), account, holdId);
        boolean due = "held".equals(state) && clock.millis() >= parse(Replies.text(reply, 4), account, holdId);
        return new Either(switch (state) {
            case "held" -> due ? held : pricing.price(held);
            case "captured" -> parse(Replies.text(reply, 3), account, holdId);
            default -> held;
        }, null);
    }

    /** An amount to capture, or (when {@code ended} is set) the outcome that ends a charge on a hold. */
    record Either(long amount, HoldOutcome ended) {
    }

    private static long parse(String figure, String account, String holdId) {
        try {
            return Long.parseLong(figure);
        } catch (NumberFormatException e) {
            throw new QuotaException(Reason.PROTOCOL, "the hold '" + holdId + "' of account '" + account
                    + "' holds a figure that is not a number; reconcile it");
        }
    }

    /** One sweep call on one partition: how many it expired, and whether more are due there. */
    CompletableFuture<long[]> sweep(int partition) {
        String[] keys = {layout.marker(partition), layout.holdIndex(partition), layout.journal(partition)};
        return scripts.run(commands, Scripts.of(Scripts.Script.HOLDS), keys, "sweep", Long.toString(clock.millis()),
                retentionMillis, layout.markerValue(), Integer.toString(SWEEP_BATCH)).thenApply(reply -> {
                    String status = Replies.text(reply, 0);
                    if (status.equals("no_marker")) {
                        return new long[]{0, 0}; // nothing was ever opened there, so nothing is held
                    }
                    if (!status.equals("swept")) {
                        throw Replies.notAnOutcome(reply, status, "(partition " + partition + ")", layout.marker(partition));
                    }
                    return new long[]{Replies.number(reply, 1), "1".equals(reply.get(2)) ? 1 : 0};
                });
    }

    private CompletableFuture<HoldOutcome> call(String op, String account, String holdId, String amount, String expires,
                                                long now) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.holdIndex(p), layout.journal(p), layout.accountKey(account),
                layout.holdKey(account, holdId)};
        String marker = layout.marker(p);
        return scripts.run(commands, Scripts.of(Scripts.Script.HOLDS), keys, op, Long.toString(now), retentionMillis,
                layout.markerValue(), Integer.toString(SWEEP_ON_TOUCH), account, holdId, amount, expires)
                .thenApply(reply -> outcome(reply, 0, account, holdId, marker));
    }

    /** Reads the reply from {@code at} on (a duplicate's original follows its first element). */
    private static HoldOutcome outcome(List<Object> reply, int at, String account, String holdId, String marker) {
        String status = Replies.text(reply, at);
        return switch (status) {
            case "held" -> new HoldOutcome.Held(Replies.number(reply, at + 1), Replies.number(reply, at + 2),
                    Instant.ofEpochMilli(Replies.number(reply, at + 3)), Replies.text(reply, at + 4));
            case "captured" -> new HoldOutcome.Captured(Replies.number(reply, at + 1), Replies.number(reply, at + 2),
                    Replies.number(reply, at + 3), Replies.text(reply, at + 4));
            case "released" -> new HoldOutcome.Released(Replies.number(reply, at + 1), Replies.number(reply, at + 2),
                    Replies.text(reply, at + 3));
            case "duplicate" -> {
                if (at != 0) {
                    throw new QuotaException(Reason.PROTOCOL, "unexpected script reply " + reply);
                }
                yield new HoldOutcome.Duplicate(outcome(reply, 1, account, holdId, marker));
            }
            case "expired" -> new HoldOutcome.Expired(Replies.number(reply, at + 1));
            case "conflict" -> new HoldOutcome.Conflict(Replies.number(reply, at + 1));
            case "insufficient" -> new HoldOutcome.Insufficient(Replies.number(reply, at + 1));
            case "unknown_hold" -> new HoldOutcome.UnknownHold(holdId);
            case "exceeds_hold" -> new HoldOutcome.ExceedsHold(Replies.number(reply, at + 1));
            case "already_captured" -> new HoldOutcome.AlreadyCaptured(Replies.number(reply, at + 1));
            case "already_released" -> new HoldOutcome.AlreadyReleased(Replies.number(reply, at + 1));
            case "not_found" -> new HoldOutcome.AccountNotFound(account);
            case "invalid_amount" -> new HoldOutcome.InvalidAmount(Replies.amountProblem(Replies.text(reply, at + 1)));
            case "corrupt" -> throw new QuotaException(Reason.PROTOCOL, "account '" + account + "' or its hold '" + holdId
                    + "' holds a figure that is not a number (" + reply + "); reconcile it");
            default -> throw Replies.notAnOutcome(reply, status, account, marker);
        };
    }
}
