package dev.warden.lock.tck;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.StepDown;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A leader whose lease is lost to a fault: told LOST within a renewal interval, and the election goes on. */
abstract class ElectionFaultClauses {

    private final LockFaultContractTest kit;

    ElectionFaultClauses(LockFaultContractTest kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a leader whose lock is removed behind its back is told LOST by its next renewal, and a later term is higher")
    void lostLeaseStepsDown() {
        String election = kit.newName();
        LockClient client = kit.client();
        ElectionClauses.Heard heard = new ElectionClauses.Heard();
        Candidacy candidacy = client.election(election).join("alone", heard);
        Await.until(kit.ttl().plus(kit.slack()), "the only candidate leads", () -> candidacy.leadership().isPresent());
        Lease first = candidacy.leadership().orElseThrow();
        long term = first.fencingToken();
        Await.until(kit.slack(), "it hears it was elected", () -> !heard.events().isEmpty());

        kit.removeBehindHoldersBack(kit.namespace(), "election:" + election);
        Await.until(kit.renewInterval().plus(kit.slack()), "the leader is told LOST", () -> heard.steppedDown(term, StepDown.LOST));
        assertThat(first.isValid()).isFalse();
        // It stood again at once: with nobody else standing it leads again, in a higher term.
        Await.until(kit.ttl().plus(kit.slack()), "the candidate leads again",
                () -> candidacy.leadership().filter(l -> l.fencingToken() > term).isPresent());
        Await.until(kit.slack(), "it hears of its new term", () -> heard.events().get(heard.events().size() - 1).kind().equals("elected"));
        assertThat(heard.events().stream().filter(e -> e.kind().equals("stepped")).count()).as("terms ended").isEqualTo(1);
        candidacy.close();
    }

    @Test
    @DisplayName("a leader cut off from the server has stopped leading, and is told LOST, by the time the next leader is elected; its fenced write after the next leader's is refused")
    void partitionedLeaderIsDeposed() {
        String election = kit.newName();
        LockFaultContractTest.Proxied cut = kit.clientBehindProxy();
        ElectionClauses.Heard cutHeard = new ElectionClauses.Heard();
        Candidacy first = cut.client().election(election).join("cut-off", cutHeard);
        Await.until(kit.ttl().plus(kit.slack()), "the first candidate leads", () -> first.leadership().isPresent());
        Lease firstTerm = first.leadership().orElseThrow();
        Candidacy second = kit.client().election(election).join("next", new ElectionClauses.Heard());

        cut.proxy().blackhole();
        Await.until(kit.ttl().multipliedBy(2).plus(kit.slack().multipliedBy(2)), "the other candidate leads",
                () -> second.leadership().isPresent());
        Lease secondTerm = second.leadership().orElseThrow();
        assertThat(firstTerm.isValid()).as("the cut-off leader's lease once the next leader is elected").isFalse();
        Await.until(kit.slack(), "the cut-off leader is told LOST", () -> cutHeard.steppedDown(firstTerm.fencingToken(), StepDown.LOST));
        assertThat(secondTerm.fencingToken()).isGreaterThan(firstTerm.fencingToken());
        FencedRegister register = new FencedRegister();
        assertThat(register.write(secondTerm.fencingToken(), 2)).as("the new leader's write").isTrue();
        assertThat(register.write(firstTerm.fencingToken(), 1)).as("the deposed leader's write after it").isFalse();
        cut.proxy().restore();
    }
}
