package dev.warden.lock.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.ReadWriteLock;
import dev.warden.lock.internal.config.LockNames;
import dev.warden.lock.spi.Share;

import java.util.Objects;

/** A read-write lock: two {@link DefaultLock}s on the shared name {@code rw:<name>}, one per side. Immutable. */
final class DefaultReadWriteLock implements ReadWriteLock {

    /** The prefix of a read-write lock's shared name. */
    static final String PREFIX = "rw:";

    private final String name;
    private final DistributedLock read;
    private final DistributedLock write;

    DefaultReadWriteLock(DefaultLockClient client, ClientParts parts, String name) {
        this.name = name;
        this.read = new DefaultLock(client, parts, PREFIX + name, parts.settings().maxHoldTime(), Share.READ, true);
        this.write = new DefaultLock(client, parts, PREFIX + name, parts.settings().maxHoldTime(), Share.WRITE, true);
    }

    static void validate(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a read-write lock's name must not be empty");
        }
        LockNames.validate(PREFIX + name);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DistributedLock readLock() {
        return read;
    }

    @Override
    public DistributedLock writeLock() {
        return write;
    }

    @Override
    public String toString() {
        return "ReadWriteLock[" + name + "]";
    }
}
