package dev.warden.lock.memory.internal;

import dev.warden.lock.spi.Grant;

/** A granted in-memory lock, or a share of a shared name: its key in the store and its fencing token. */
record MemoryGrant(String key, long fencingToken, boolean shared) implements Grant {

    MemoryGrant(String key, long fencingToken) {
        this(key, fencingToken, false);
    }
}
