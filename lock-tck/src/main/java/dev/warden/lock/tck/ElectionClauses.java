package dev.warden.lock.tck;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Election;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LeadershipListener;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.StepDown;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Leader election: one leader among candidates of several clients, observers that see it and its term,
 * terms that rise from one leader to the next, a leader that resigns, leaves or whose client closes
 * told why, and nothing left on the server when every candidate has left.
 */
abstract class ElectionClauses {

    private final LockKit kit;

    ElectionClauses(LockKit kit) {
        this.kit = kit;
    }

    /** What one candidate's listener heard, in order. */
    static final class Heard implements LeadershipListener {
        record Event(String kind, long term, StepDown why) {
        }

        private final List<Event> events = new ArrayList<>();

        @Override
        public synchronized void elected(Lease leadership) {
            events.add(new Event("elected", leadership.fencingToken(), null));
        }

        @Override
        public synchronized void stepped(long term, StepDown why, LeaseLost lost) {
            events.add(new Event("stepped", term, why));
        }

        synchronized List<Event> events() {
            return List.copyOf(events);
        }

        synchronized boolean steppedDown(long term, StepDown why) {
            return events.contains(new Event("stepped", term, why));
        }
    }

    private record Standing(String id, LockClient client, Candidacy candidacy, Heard heard) {
    }

    private List<Standing> stand(String election, String... ids) {
        List<Standing> all = new ArrayList<>();
        for (String id : ids) {
            LockClient client = kit.client();
            Heard heard = new Heard();
            all.add(new Standing(id, client, client.election(election).join(id, heard), heard));
        }
        return all;
    }

    private Standing leaderAmong(List<Standing> all) {
        Await.until(kit.ttl().plus(kit.slack()), "one candidate leads", () -> all.stream()
                .filter(s -> s.candidacy().leadership().isPresent()).count() == 1);
        Standing leader = all.stream().filter(s -> s.candidacy().leadership().isPresent()).findFirst().orElseThrow();
        long term = leader.candidacy().leadership().orElseThrow().fencingToken();
        Await.until(kit.slack(), "the leader's listener hears it was elected",
                () -> leader.heard().events().contains(new Heard.Event("elected", term, null)));
        return leader;
    }

    /** Two candidates of two clients in a new election, once one leads: the leader, the other, the term. */
    private record Pair(String election, Standing leader, Standing other, long term) {
    }

    private Pair twoCandidates() {
        String election = kit.newName();
        List<Standing> all = stand(election, "alpha", "beta");
        Standing leader = leaderAmong(all);
        return new Pair(election, leader, all.get(0) == leader ? all.get(1) : all.get(0),
                leader.candidacy().leadership().orElseThrow().fencingToken());
    }

    @Test
    @DisplayName("one leader among candidates of three clients; an observer sees its id and term; no one else leads")
    void oneLeaderObserved() {
        String election = kit.newName();
        List<Standing> all = stand(election, "alpha", "beta", "gamma");
        Standing leader = leaderAmong(all);
        Lease term = leader.candidacy().leadership().orElseThrow();
        assertThat(term.isValid()).isTrue();
        Election observed = kit.client().election(election);
        Election.Leader seen = observed.leader().orElseThrow(() -> new AssertionError("an observer sees no leader"));
        assertThat(seen.candidateId()).as("the leader's id an observer reads").isEqualTo(leader.id());
        if (kit.observedTermExact()) {
            assertThat(seen.term()).as("the term an observer reads").isEqualTo(term.fencingToken());
        } else {
            assertThat(seen.term()).as("the term an observer reads").isGreaterThanOrEqualTo(term.fencingToken());
        }
        // Past a renewal or two: still one leader, the same one, and the others heard nothing.
        Await.during(kit.renewInterval().multipliedBy(2), "the same single leader", () -> all.stream()
                .filter(s -> s.candidacy().leadership().isPresent()).count() == 1 && term.isValid());
        all.stream().filter(s -> s != leader).forEach(s -> assertThat(s.heard().events()).isEmpty());
    }

    @Test
    @DisplayName("a leader that leaves is told CLOSED, the next term is higher, and after the last one leaves nothing is left")
    void leavingHandsOver() {
        String election = kit.newName();
        List<Standing> all = new ArrayList<>(stand(election, "alpha", "beta", "gamma"));
        Election observed = kit.client().election(election);
        long previous = Long.MIN_VALUE;
        while (!all.isEmpty()) {
            Standing leader = leaderAmong(all);
            long term = leader.candidacy().leadership().orElseThrow().fencingToken();
            assertThat(term).as("each leader's term above the one before").isGreaterThan(previous);
            previous = term;
            leader.candidacy().close();
            Await.until(kit.slack(), "the leaving leader is told CLOSED", () -> leader.heard().steppedDown(term, StepDown.CLOSED));
            assertThat(leader.candidacy().leadership()).isEmpty();
            all.remove(leader);
        }
        assertThat(observed.leader()).as("the leader once every candidate left").isEmpty();
        assertThat(kit.freed("election:" + election)).as("anything left on the server").isTrue();
    }

    @Test
    @DisplayName("a leader that resigns is told RESIGNED, another candidate takes the next term, and the resigned one stands again")
    void resignHandsOver() {
        Pair pair = twoCandidates();
        Standing first = pair.leader();
        Standing second = pair.other();
        long firstTerm = pair.term();
        first.candidacy().resign();
        Await.until(kit.slack(), "the resigning leader is told RESIGNED", () -> first.heard().steppedDown(firstTerm, StepDown.RESIGNED));
        Await.until(kit.ttl().plus(kit.slack()), "the other candidate leads", () -> second.candidacy().leadership().isPresent());
        long secondTerm = second.candidacy().leadership().orElseThrow().fencingToken();
        assertThat(secondTerm).isGreaterThan(firstTerm);
        assertThat(first.candidacy().leadership()).isEmpty();
        // The resigned candidate stood again: it leads once the other leaves.
        second.candidacy().close();
        Await.until(kit.ttl().plus(kit.slack()), "the resigned candidate leads again", () -> first.candidacy().leadership().isPresent());
        assertThat(first.candidacy().leadership().orElseThrow().fencingToken()).isGreaterThan(secondTerm);
    }

    @Test
    @DisplayName("a leader whose client closes is told CLOSED before close returns, and another candidate leads")
    void clientCloseEndsTerm() {
        Pair pair = twoCandidates();
        Standing leader = pair.leader();
        Standing other = pair.other();
        long term = pair.term();
        String election = pair.election();
        leader.client().close();
        assertThat(leader.heard().events()).as("what the leader heard by the time its client closed")
                .containsExactly(new Heard.Event("elected", term, null), new Heard.Event("stepped", term, StepDown.CLOSED));
        Await.until(kit.ttl().plus(kit.slack()), "the other candidate leads", () -> other.candidacy().leadership().isPresent());
        assertThat(other.candidacy().leadership().orElseThrow().fencingToken()).isGreaterThan(term);
        assertThatThrownBy(() -> leader.client().election(election).join("again", new Heard()))
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
    }

    @Test
    @DisplayName("bad names and candidate ids are refused with IllegalArgumentException; no candidate means no leader")
    void badInput() {
        LockClient client = kit.client();
        assertThatThrownBy(() -> client.election("")).isInstanceOf(IllegalArgumentException.class);
        Election election = client.election(kit.newName());
        assertThatThrownBy(() -> election.join("", new Heard())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> election.join("x".repeat(129), new Heard())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> election.join("tab\there", new Heard())).isInstanceOf(IllegalArgumentException.class);
        assertThat(election.leader()).isEqualTo(Optional.empty());
    }
}
