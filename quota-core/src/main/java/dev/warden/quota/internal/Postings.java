package dev.warden.quota.internal;

import dev.warden.quota.Amount;
import dev.warden.quota.AmountProblem;
import dev.warden.quota.EntryKind;
import dev.warden.quota.InvalidIdException.Field;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaService;
import dev.warden.quota.redis.Ids;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.ScriptRunner;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Named balances on {@code post.lua} and {@code balances.lua}: builds each call's keys and arguments
 * (lines sorted by name, so one posting has one text) and reads the reply.
 *
 * <p>Thread-safe: immutable.
 */
final class Postings {

    private final KeyLayout layout;
    private final ScriptRunner scripts;
    private final RedisConnection commands;
    private final String retentionMillis;

    Postings(KeyLayout layout, ScriptRunner scripts, RedisConnection commands, Duration retention) {
        this.layout = layout;
        this.scripts = scripts;
        this.commands = commands;
        this.retentionMillis = Long.toString(retention.toMillis());
    }

    CompletableFuture<PostingOutcome> open(String account, String balance) {
        Ids.check(Field.ACCOUNT, account);
        Ids.checkBalanceName(balance);
        return call("open", account, "", List.of(balance, "", ""));
    }

    CompletableFuture<PostingOutcome> post(String account, String requestId, Map<String, Long> deltas) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        Objects.requireNonNull(deltas, "deltas");
        SortedMap<String, Long> lines = new TreeMap<>();
        for (Map.Entry<String, Long> line : deltas.entrySet()) {
            String name = Ids.checkBalanceName(line.getKey());
            lines.put(name, Objects.requireNonNull(line.getValue(), () -> "the delta of balance '" + name + "'"));
        }
        if (lines.isEmpty()) {
            return done(new PostingOutcome.InvalidPosting(PostingOutcome.Problem.EMPTY));
        }
        if (lines.size() > QuotaService.MAX_POSTING_LINES) {
            return done(new PostingOutcome.InvalidPosting(PostingOutcome.Problem.TOO_MANY_BALANCES));
        }
        List<String> args = new ArrayList<>(3 * lines.size());
        for (Map.Entry<String, Long> line : lines.entrySet()) {
            long delta = line.getValue();
            Optional<AmountProblem> problem = delta == Long.MIN_VALUE ? Optional.of(AmountProblem.TOO_LARGE)
                    : Amount.problem(Math.abs(delta));
            if (problem.isPresent()) {
                return done(new PostingOutcome.InvalidAmount(line.getKey(), problem.get()));
            }
            args.add(line.getKey());
            args.add(delta < 0 ? "-" : "+");
            args.add(Long.toString(Math.abs(delta)));
        }
        return call("post", account, requestId, args);
    }

    /** The account's named balances by name; empty when there is no such account. */
    CompletableFuture<Optional<SortedMap<String, Long>>> read(String account) {
        Ids.check(Field.ACCOUNT, account);
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.balancesKey(account)};
        String marker = layout.marker(p);
        return scripts.run(commands, Scripts.of(Scripts.Script.BALANCES), keys, account, layout.markerValue())
                .thenApply(reply -> {
                    String status = Replies.text(reply, 0);
                    return switch (status) {
                        case "balances" -> Optional.of(pairs(reply, 1));
                        case "not_found" -> Optional.<SortedMap<String, Long>>empty();
                        default -> throw Replies.notAnOutcome(reply, status, account, marker);
                    };
                });
    }

    private CompletableFuture<PostingOutcome> call(String op, String account, String requestId, List<String> lines) {
        int p = layout.partition(account);
        boolean post = op.equals("post");
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.balancesKey(account),
                post ? layout.requestKey(account, requestId) : layout.marker(p),
                post ? layout.postingKey(account, requestId) : layout.marker(p), layout.journal(p)};
        List<String> args = new ArrayList<>(6 + lines.size());
        args.add(op);
        args.add(account);
        args.add(requestId);
        args.add(retentionMillis);
        args.add(layout.markerValue());
        args.add(Integer.toString(lines.size() / 3));
        args.addAll(lines);
        String marker = layout.marker(p);
        return scripts.run(commands, Scripts.of(Scripts.Script.POST), keys, args.toArray(String[]::new))
                .thenApply(reply -> outcome(reply, account, marker));
    }

    private static PostingOutcome outcome(List<Object> reply, String account, String marker) {
        String status = Replies.text(reply, 0);
        return switch (status) {
            case "posted" -> new PostingOutcome.Posted(pairs(reply, 2), Replies.text(reply, 1));
            case "duplicate" -> new PostingOutcome.Duplicate(new PostingOutcome.Posted(pairs(reply, 2), Replies.text(reply, 1)));
            case "opened" -> new PostingOutcome.Opened(Replies.text(reply, 1));
            case "exists" -> new PostingOutcome.BalanceExists(Replies.text(reply, 1), Replies.number(reply, 2));
            case "conflict" -> new PostingOutcome.Conflict(kind(Replies.text(reply, 1)));
            case "insufficient" -> new PostingOutcome.Insufficient(Replies.text(reply, 1), Replies.number(reply, 2));
            case "unknown_balance" -> new PostingOutcome.UnknownBalance(Replies.text(reply, 1));
            case "not_found" -> new PostingOutcome.AccountNotFound(account);
            case "invalid_amount" -> new PostingOutcome.InvalidAmount(Replies.text(reply, 1),
                    Replies.amountProblem(Replies.text(reply, 2)));
            case "invalid_posting" -> new PostingOutcome.InvalidPosting(PostingOutcome.Problem.valueOf(Replies.text(reply, 1)));
            case "corrupt" -> throw new QuotaException(Reason.PROTOCOL, "balance '" + Replies.text(reply, 1) + "' of account '"
                    + account + "' holds a figure that is not a number (" + reply + "); reconcile it");
            default -> throw Replies.notAnOutcome(reply, status, account, marker);
        };
    }

    private static EntryKind kind(String wire) {
        try {
            return EntryKind.fromWireName(wire);
        } catch (IllegalArgumentException e) {
            throw new QuotaException(Reason.PROTOCOL, "an idempotency record holds an unknown kind '" + wire + "'", e);
        }
    }

    private static SortedMap<String, Long> pairs(List<Object> reply, int from) {
        SortedMap<String, Long> m = new TreeMap<>();
        for (int i = from; i + 1 < reply.size(); i += 2) {
            m.put(Replies.text(reply, i), Replies.number(reply, i + 1));
        }
        if ((reply.size() - from) % 2 != 0) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected script reply " + reply);
        }
        return Collections.unmodifiableSortedMap(m);
    }

    private static CompletableFuture<PostingOutcome> done(PostingOutcome outcome) {
        return CompletableFuture.completedFuture(outcome);
    }
}
