package dev.warden.lock.memory.internal;

import dev.warden.lock.spi.Grant;

/** A granted in-memory lock: its key in the store and its fencing token. */
record MemoryGrant(String key, long fencingToken) implements Grant {
}
