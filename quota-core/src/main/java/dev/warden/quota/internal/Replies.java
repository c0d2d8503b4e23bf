package dev.warden.quota.internal;

import dev.warden.quota.AmountProblem;
import dev.warden.quota.EntryKind;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import java.util.List;
import java.util.OptionalLong;

/**
 * Reads a script's reply (an array of strings whose first names the outcome) into an
 * {@link Outcome}, or throws for what is not an outcome.
 */
final class Replies {

    private Replies() {
    }

    /**
     * @param token the fencing token sent, or -1 when none
     */
    static Outcome outcome(List<Object> reply, String account, String partitionKey, long token) {
        String status = text(reply, 0);
        return switch (status) {
            case "applied" -> applied(reply);
            case "duplicate" -> new Outcome.Duplicate(applied(reply));
            case "conflict" -> new Outcome.Conflict(kind(text(reply, 1)), text(reply, 3), number(reply, 2));
            case "insufficient" -> new Outcome.Insufficient(number(reply, 1));
            case "not_found" -> new Outcome.AccountNotFound(account);
            case "invalid_amount" -> new Outcome.InvalidAmount(amountProblem(text(reply, 1)));
            case "stale_fence" -> new Outcome.StaleFence(token, number(reply, 1));
            case "exists" -> new Outcome.AccountExists(number(reply, 1));
            default -> throw notAnOutcome(reply, status, account, partitionKey);
        };
    }

    static OptionalLong balance(List<Object> reply, String account, String partitionKey) {
        String status = text(reply, 0);
        return switch (status) {
            case "balance" -> OptionalLong.of(number(reply, 1));
            case "not_found" -> OptionalLong.empty();
            default -> throw notAnOutcome(reply, status, account, partitionKey);
        };
    }

    static RuntimeException notAnOutcome(List<Object> reply, String status, String account, String marker) {
        return switch (status) {
            case "no_marker" -> new QuotaException(Reason.DATA_LOST, "the partition of account '" + account
                    + "' has no marker (" + marker + "): Redis lost its data, or no account was ever opened in"
                    + " this partition; reconcile from the ledger before trusting any balance there");
            case "marker_mismatch" -> new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker " + marker
                    + " says '" + text(reply, 1) + "': the data was written with another partition count");
            case "invalid_id" -> new InvalidIdException(InvalidIdException.Field.valueOf(text(reply, 1)),
                    InvalidIdException.Problem.valueOf(text(reply, 2)), "the script refused the "
                    + text(reply, 1).toLowerCase(java.util.Locale.ROOT) + " id: " + text(reply, 2));
            default -> new QuotaException(Reason.PROTOCOL, "unexpected script reply " + reply);
        };
    }

    private static Outcome.Applied applied(List<Object> reply) {
        return new Outcome.Applied(number(reply, 1), text(reply, 2));
    }

    private static EntryKind kind(String wire) {
        try {
            return EntryKind.fromWireName(wire);
        } catch (IllegalArgumentException e) {
            throw new QuotaException(Reason.PROTOCOL, "an idempotency record holds an unknown kind '" + wire + "'", e);
        }
    }

    static AmountProblem amountProblem(String name) {
        try {
            return AmountProblem.valueOf(name);
        } catch (IllegalArgumentException e) {
            return AmountProblem.MALFORMED;
        }
    }

    static String text(List<Object> reply, int index) {
        if (reply == null || reply.size() <= index || !(reply.get(index) instanceof String s)) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected script reply " + reply);
        }
        return s;
    }

    static long number(List<Object> reply, int index) {
        String s = text(reply, index);
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected number '" + s + "' in script reply " + reply, e);
        }
    }
}
