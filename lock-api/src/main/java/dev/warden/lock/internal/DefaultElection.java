package dev.warden.lock.internal;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Election;
import dev.warden.lock.LeadershipListener;
import dev.warden.lock.internal.config.LockNames;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * An election: the lock {@code election:<name>}, whose grants are made out to owners that end in
 * {@code /<candidate id>}, so an observer reads the leader's id from the holder's owner.
 * Immutable; each candidacy keeps its own state.
 */
final class DefaultElection implements Election {

    /** The prefix of an election's lock name. */
    static final String LOCK_PREFIX = "election:";
    private static final int MAX_CANDIDATE_BYTES = 128;

    private final DefaultLockClient client;
    private final ClientParts parts;
    private final String name;
    private final DefaultLock lock;

    DefaultElection(DefaultLockClient client, ClientParts parts, String name) {
        this.client = client;
        this.parts = parts;
        this.name = name;
        this.lock = new DefaultLock(client, parts, LOCK_PREFIX + name, java.util.Optional.empty());
    }

    /** Validates an election's name: its lock's name must be valid. */
    static void validate(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("an election's name must not be empty");
        }
        LockNames.validate(LOCK_PREFIX + name);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Candidacy join(String candidateId, LeadershipListener listener) {
        validateCandidate(candidateId);
        Objects.requireNonNull(listener, "listener");
        return client.campaign(lock, name, candidateId, listener);
    }

    @Override
    public Optional<Leader> leader() {
        // The operator's read of the election's lock: one server read, the token under this client's epoch.
        return new DefaultLockAdmin(parts).holder(LOCK_PREFIX + name)
                .map(h -> new Leader(candidateOf(h.holderId()), h.token()));
    }

    /** The candidate id an owner was made out to; a holder that took the lock directly shows its owner. */
    static String candidateOf(String owner) {
        int slash = owner.indexOf('/');
        return slash < 0 ? owner : owner.substring(slash + 1);
    }

    private static void validateCandidate(String id) {
        Objects.requireNonNull(id, "candidateId");
        if (id.isEmpty()) {
            throw new IllegalArgumentException("a candidate id must not be empty");
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > MAX_CANDIDATE_BYTES) {
            throw new IllegalArgumentException("a candidate id must be at most " + MAX_CANDIDATE_BYTES + " bytes of UTF-8");
        }
        if (id.codePoints().anyMatch(cp -> Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE)) {
            throw new IllegalArgumentException("a candidate id must not contain control characters or lone surrogates");
        }
    }

    @Override
    public String toString() {
        return "Election[" + name + "]";
    }
}
