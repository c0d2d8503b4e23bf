package dev.warden.lock;

import dev.warden.lock.internal.ClientFactory;

import java.net.URI;
import java.util.Map;
import java.util.Properties;

/**
 * The entry point: a connection to one lock backend, chosen by configuration so application code
 * does not change when the backend does.
 *
 * <p>Settings (keys outside {@code warden.lock.} are ignored, so a whole application
 * {@link Properties} may be passed; unknown keys inside it are errors):
 * <table>
 *   <caption>settings</caption>
 *   <tr><td>{@code warden.lock.backend}</td><td>required: {@code redis}, {@code etcd}, {@code zookeeper}, or {@code memory} (tests and a single JVM only)</td></tr>
 *   <tr><td>{@code warden.lock.endpoints}</td><td>required: comma-separated URIs, e.g. {@code redis://127.0.0.1:6379}, {@code memory://tests}</td></tr>
 *   <tr><td>{@code warden.lock.namespace}</td><td>prefix of every key or path; default {@code warden}</td></tr>
 *   <tr><td>{@code warden.lock.ttl}</td><td>lease time to live; default {@code 30s}</td></tr>
 *   <tr><td>{@code warden.lock.connect-timeout}</td><td>default {@code 5s}</td></tr>
 *   <tr><td>{@code warden.lock.request-timeout}</td><td>deadline of every server call; default {@code 5s}</td></tr>
 *   <tr><td>{@code warden.lock.outage-tolerance}</td><td>how long an acquisition keeps retrying (with backoff) while
 *       the server cannot be reached before it fails with {@code UNAVAILABLE}; a timed acquisition also stops at its
 *       wait; {@code 0s} fails at the first failed call; default {@code 30s}</td></tr>
 *   <tr><td>{@code warden.lock.max-hold-time}</td><td>the longest any lease of the client is held, see
 *       {@link DistributedLock#withMaxHoldTime}; default none</td></tr>
 *   <tr><td>{@code warden.lock.<backend>.*}</td><td>backend options, listed by each backend</td></tr>
 * </table>
 * Durations are written {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT30S}).
 * Every problem in a configuration is reported in one {@link LockException} with reason
 * {@link LockException.Reason#CONFIGURATION} (or {@code NO_PROVIDER} / {@code AMBIGUOUS_PROVIDER}
 * when that is among them). Options of the other known backends may sit beside the chosen one's,
 * so one file can serve every backend; they are checked when their backend is chosen.
 *
 * <p>Closing the client releases every lease it holds, stops its renewals and frees its threads.
 */
public interface LockClient extends AutoCloseable {

    /** Creates a client from settings; values may be strings or {@link java.time.Duration}s. */
    static LockClient create(Map<String, ?> settings) {
        return ClientFactory.create(settings);
    }

    /** Creates a client from settings, telling {@code observer} of every grant, renewal, release and loss. */
    static LockClient create(Map<String, ?> settings, LockObserver observer) {
        return ClientFactory.create(settings, observer);
    }

    /** Creates a client from properties (see the settings above). */
    static LockClient create(Properties properties) {
        return ClientFactory.create(properties);
    }

    /**
     * Creates a client from a URI: the scheme names the backend, the authority its endpoints
     * (comma-separated hosts allowed), and query parameters the other settings without their
     * prefix, e.g. {@code redis://127.0.0.1:6379?namespace=billing&ttl=10s} or
     * {@code etcd://10.0.0.1:2379,10.0.0.2:2379}.
     */
    static LockClient create(URI uri) {
        return ClientFactory.create(uri);
    }

    /**
     * A lock by name. The name must be non-empty, at most 256 bytes of UTF-8, well-formed and free
     * of control characters.
     *
     * @throws IllegalArgumentException when the name is invalid
     */
    DistributedLock lock(String name);

    /**
     * A leader election by name: candidates {@linkplain Election#join join} it, at most one leads at a
     * time, and each term's number is a fencing token. An election {@code x} is the lock
     * {@code election:x}; the name follows the rules of lock names.
     *
     * @throws IllegalArgumentException when the name is invalid
     */
    Election election(String name);

    /**
     * A counting semaphore by name with {@code permits} permits ({@link Semaphore}). A semaphore {@code x}
     * is the shared name {@code semaphore:x}, which lives apart from every lock; the name follows the
     * rules of lock names.
     *
     * @throws IllegalArgumentException when the name is invalid or {@code permits} is not positive
     * @throws LockException {@code CONFIGURATION} on a client in the migrating step between two backends
     */
    Semaphore semaphore(String name, int permits);

    /**
     * A read-write lock by name ({@link ReadWriteLock}). A read-write lock {@code x} is the shared name
     * {@code rw:x}, which lives apart from every lock; the name follows the rules of lock names.
     *
     * @throws IllegalArgumentException when the name is invalid
     * @throws LockException {@code CONFIGURATION} on a client in the migrating step between two backends
     */
    ReadWriteLock readWriteLock(String name);

    /** The operator's view of this client's namespace: who holds a lock, and an audited forced release. */
    LockAdmin admin();

    /** The backend serving this client, e.g. {@code redis}. */
    String backend();

    /** Releases every lease this client holds, then disconnects. Idempotent. */
    @Override
    void close();
}
