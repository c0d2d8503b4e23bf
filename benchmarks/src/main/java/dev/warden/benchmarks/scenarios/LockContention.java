package dev.warden.benchmarks.scenarios;

/**
 * How the threads of a lock row share names and clients. The first two are what every lock row runs; the
 * third is for libraries that settle contention among one JVM's threads locally (Warden's local queue,
 * Spring's {@code JdbcLockRegistry} behind a {@code ReentrantLock}): only with a client per thread do the
 * contenders meet where separate processes would, in the server, so its wake-up path (notifications or
 * polling) is what is measured.
 */
public enum LockContention {

    /** A name, so a critical section, per thread; one client shared by the threads. */
    UNCONTENDED("lock, uncontended (a name per thread)"),

    /** One name for every thread; one client shared by the threads. */
    CONTENDED("lock, contended (one name)"),

    /** One name for every thread; a client (pool, listener, registry) per thread, as separate processes would have. */
    CONTENDED_CLIENT_PER_THREAD("lock, contended (one name, a client per thread)");

    private final String scenario;

    LockContention(String scenario) {
        this.scenario = scenario;
    }

    /** The scenario name rows of this kind share in the table. */
    public String scenario() {
        return scenario;
    }

    /** Whether every thread takes the same name. */
    public boolean contended() {
        return this != UNCONTENDED;
    }

    /** Whether each thread has a client of its own. */
    public boolean clientPerThread() {
        return this == CONTENDED_CLIENT_PER_THREAD;
    }

    /** The kind the rows' {@code contended} flag stands for. */
    public static LockContention of(boolean contended) {
        return contended ? CONTENDED : UNCONTENDED;
    }
}
