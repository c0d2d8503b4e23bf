package dev.warden.lock.etcd.internal;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * The entry keys a client's shared attempts and grants use: {@code <sharedPrefix><lease hex>-<slot>}, the
 * lowest slot that no live attempt or grant of this driver uses on that lease and name. A shared name's
 * contenders of one client hold together, so one key per session and name (the lock's way) is not
 * enough; a key per attempt would leave a deleted key behind on every acquisition, which etcd's index
 * keeps and walks in every read of the queue until a compaction. Slots reuse a few keys instead, as
 * many as the client's contenders at once.
 *
 * <p>A slot is freed once the server answered the abandon of its attempt or the release of its grant
 * (lock-api releases lost grants too); an entry still on the server under a freed slot (a clean-up that
 * failed and is retried in the background) is a leftover the next user deletes, guarded by its create
 * revision, before creating its own.
 *
 * <p>Concurrency: {@code taken} and every slot's {@code freed} are guarded by {@code this}.
 */
final class SharedSlots {

    /** One slot taken; freeing it twice frees it once, so a stale holder never frees a later one's. */
    static final class Slot {
        private final String base;
        private final int index;
        /** Guarded by the owning {@link SharedSlots}. */
        private boolean freed;

        private Slot(String base, int index) {
            this.base = base;
            this.index = index;
        }

        /** The entry key of this slot. */
        String key() {
            return base + "-" + index;
        }
    }

    /** Slots in use per {@code <sharedPrefix><lease hex>}; a base leaves when its last slot is freed. */
    private final Map<String, BitSet> taken = new HashMap<>();

    /** The lowest free slot of {@code session} for the shared name of {@code prefix}. */
    synchronized Slot take(String prefix, Session session) {
        String base = prefix + Long.toHexString(session.leaseId());
        BitSet used = taken.computeIfAbsent(base, b -> new BitSet());
        int index = used.nextClearBit(0);
        used.set(index);
        return new Slot(base, index);
    }

    synchronized void free(Slot slot) {
        if (slot == null || slot.freed) {
            return;
        }
        slot.freed = true;
        BitSet used = taken.get(slot.base);
        if (used != null) {
            used.clear(slot.index);
            if (used.isEmpty()) {
                taken.remove(slot.base);
            }
        }
    }
}
