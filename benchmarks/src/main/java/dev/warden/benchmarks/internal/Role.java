package dev.warden.benchmarks.internal;

/** What a row is to the comparison: Warden, a library users would pick instead, or a limit of the server. */
public enum Role {

    /** One of Warden's own implementations (the rows named {@code warden ...}). */
    WARDEN,

    /** What users would pick instead: Redisson, jetcd, Curator, ShedLock, Spring, PostgreSQL, the seed's code. */
    PEER,

    /**
     * What the server allows with no library around it (the bare scripts, {@code redis-benchmark},
     * {@code redis-cli --pipe}): a ceiling to read Warden against, not a choice to beat.
     */
    LIMIT;

    /** The role of the row named {@code implementation}, by the names {@link Rows} and {@link ServerLimit} give. */
    public static Role of(String implementation) {
        if (implementation.startsWith("warden")) {
            return WARDEN;
        }
        if (implementation.startsWith("limit:") || implementation.startsWith("redis-benchmark")
                || implementation.startsWith("redis-cli")) {
            return LIMIT;
        }
        return PEER;
    }
}
