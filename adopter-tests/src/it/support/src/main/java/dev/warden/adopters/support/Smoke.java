package dev.warden.adopters.support;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;

import java.util.HashSet;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a new user tries first: take a lock, read its fencing token, release it, take it again. */
public final class Smoke {

    private Smoke() {
    }

    public static void acquireFenceRelease(LockClient locks) {
        DistributedLock lock = locks.lock("adopter:" + UUID.randomUUID());
        long first;
        try (Lease lease = lock.acquire()) {
            assertTrue(lease.isValid(), "a fresh lease is valid");
            first = lease.fencingToken();
            assertEquals(ReleaseOutcome.RELEASED, lease.release());
            assertFalse(lease.isValid(), "a released lease is not valid");
        }
        try (Lease again = lock.acquire()) {
            assertTrue(again.fencingToken() > first,
                    "the next grant's token " + again.fencingToken() + " is above the first's " + first);
            assertEquals(ReleaseOutcome.RELEASED, again.release());
        }
    }

    public static void oneNettyVersion(Map<String, String> netty) {
        assertFalse(netty.isEmpty(), "no Netty on the class path");
        assertEquals(1, new HashSet<>(netty.values()).size(), () -> "Netty versions on the class path: " + netty);
    }
}
