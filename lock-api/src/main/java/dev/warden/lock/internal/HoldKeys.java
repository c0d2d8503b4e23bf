package dev.warden.lock.internal;

import dev.warden.lock.spi.Share;

/**
 * The key a thread's holds are kept under: a lock's name, or a read-write lock's name with its side, so
 * a thread's read hold is never mistaken for its write hold. Semaphore permits are not reentrant and
 * never looked up by key.
 */
final class HoldKeys {

    private HoldKeys() {
    }

    static String of(String name, Share share) {
        if (share == null) {
            return name;
        }
        if (share.equals(Share.READ)) {
            return name + "#read";
        }
        if (share.equals(Share.WRITE)) {
            return name + "#write";
        }
        return name + "#" + share.weight() + "/" + share.limit();
    }
}
