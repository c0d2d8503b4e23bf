package dev.warden.benchmarks;

/**
 * One workload run by one implementation: the unit the runner measures. Implementations of the
 * same {@link #scenario()} do the same work against the same servers, so their figures compare.
 */
public interface Workload extends AutoCloseable {

    /** What is measured, e.g. {@code lock, contended}; rows with the same scenario sit side by side. */
    String scenario();

    /** Who does it, e.g. {@code warden-redis} or {@code redisson}. */
    String implementation();

    /** Connects and prepares for {@code threads} threads. */
    void setUp(int threads) throws Exception;

    /** The operation thread {@code index} repeats; called once per thread after {@link #setUp}. */
    Operation operation(int index);

    /**
     * The server the operation runs on, whose CPU time per operation is reported beside the client's:
     * on two shared cores, the figure that shows which side bounds a row.
     */
    default Server server() {
        return Server.NONE;
    }

    /** How many units of work (deductions, lock cycles) one operation does; throughput counts units. */
    default int unitsPerOperation() {
        return 1;
    }

    /**
     * Checks the end state after a run in which {@code completed} operations succeeded, e.g. final
     * balances = initial − applied. A wrong result fails the whole run.
     */
    default void verify(long completed) throws Exception {
    }

    /** What the workload saw beyond the figures (retries, aborts), for the report; empty by default. */
    default String note() {
        return "";
    }

    @Override
    void close() throws Exception;

    /** The server processes whose CPU a row can report (PostgreSQL's is reported in the note, per connection). */
    enum Server {
        NONE, REDIS, ETCD, ZOOKEEPER
    }

    /** One timed operation. */
    @FunctionalInterface
    interface Operation {
        void run() throws Exception;
    }
}
