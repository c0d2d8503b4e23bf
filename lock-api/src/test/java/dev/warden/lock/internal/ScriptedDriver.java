package dev.warden.lock.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockDriver;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The SPI's other side, scripted by a test: lock-api's unit tests need a driver whose answers come
 * when the test says (a renewal answered late, a poll that fails), and lock-api knows no server.
 * Unscripted, it grants every poll at once with the next token and confirms every renewal and
 * release. Records when each call was made, on the test's clock. Concurrency: synchronized.
 */
final class ScriptedDriver implements LockDriver {

    record Grant1(long fencingToken) implements Grant {
    }

    private final Timekeeper time;
    private long tokens;
    private final Deque<Supplier<CompletionStage<Optional<Grant>>>> polls = new ArrayDeque<>();
    private final List<Long> pollTimes = new ArrayList<>();
    private final List<Long> renewTimes = new ArrayList<>();
    private final List<CompletableFuture<Boolean>> pendingRenewals = new ArrayList<>();
    private final List<Grant> released = new ArrayList<>();
    private int abandoned;
    private boolean holdRenewals;

    ScriptedDriver(Timekeeper time) {
        this.time = time;
    }

    // ----- scripting ------------------------------------------------------------------------------

    /** The next poll answers with {@code answer}. */
    synchronized ScriptedDriver thenPoll(Supplier<CompletionStage<Optional<Grant>>> answer) {
        polls.add(answer);
        return this;
    }

    /** The next {@code n} polls fail with {@code reason}. */
    synchronized ScriptedDriver failPolls(int n, LockException.Reason reason) {
        for (int i = 0; i < n; i++) {
            polls.add(() -> CompletableFuture.failedFuture(new LockException(reason, "scripted failure")));
        }
        return this;
    }

    /** Renewals wait until the test answers them ({@link #answerRenewal}). */
    synchronized ScriptedDriver holdRenewals() {
        holdRenewals = true;
        return this;
    }

    synchronized void answerRenewal(int index, boolean stillOurs) {
        pendingRenewals.get(index).complete(stillOurs);
    }

    synchronized void failRenewal(int index, Throwable error) {
        pendingRenewals.get(index).completeExceptionally(error);
    }

    synchronized Grant nextGrant() {
        return new Grant1(++tokens);
    }

    // ----- what happened --------------------------------------------------------------------------

    synchronized List<Duration> pollTimes() {
        return pollTimes.stream().map(Duration::ofNanos).toList();
    }

    synchronized List<Duration> renewTimes() {
        return renewTimes.stream().map(Duration::ofNanos).toList();
    }

    synchronized List<Grant> released() {
        return List.copyOf(released);
    }

    synchronized int abandoned() {
        return abandoned;
    }

    // ----- the SPI --------------------------------------------------------------------------------

    @Override
    public LockAttempt attempt(String name, String owner) {
        return new LockAttempt() {
            @Override
            public CompletionStage<Optional<Grant>> poll(Duration ttl) {
                Supplier<CompletionStage<Optional<Grant>>> answer;
                synchronized (ScriptedDriver.this) {
                    pollTimes.add(time.nanoTime());
                    answer = polls.poll();
                }
                return answer != null ? answer.get() : CompletableFuture.completedFuture(Optional.of(nextGrant()));
            }

            @Override
            public CompletionStage<Void> changed() {
                return new CompletableFuture<>();
            }

            @Override
            public CompletionStage<Void> abandon() {
                synchronized (ScriptedDriver.this) {
                    abandoned++;
                }
                return CompletableFuture.completedFuture(null);
            }
        };
    }

    @Override
    public synchronized CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        renewTimes.add(time.nanoTime());
        CompletableFuture<Boolean> answer = holdRenewals ? new CompletableFuture<>() : CompletableFuture.completedFuture(true);
        pendingRenewals.add(answer);
        return answer;
    }

    @Override
    public synchronized CompletionStage<Boolean> release(Grant grant) {
        released.add(grant);
        return CompletableFuture.completedFuture(true);
    }

    @Override
    public void close() {
    }
}
