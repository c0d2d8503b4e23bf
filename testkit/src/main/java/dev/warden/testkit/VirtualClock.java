package dev.warden.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock the test moves by hand, for the engine's clock seam ({@code QuotaFactory.create(..., clock)}) where
 * time is the subject. UTC only. Thread-safe.
 */
public final class VirtualClock extends Clock {

    private final AtomicLong millis;

    public VirtualClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    /** Sets the time (a program that starts over). */
    public void set(Instant at) {
        millis.set(at.toEpochMilli());
    }

    public void advance(Duration by) {
        millis.addAndGet(by.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (!ZoneOffset.UTC.equals(zone)) {
            throw new UnsupportedOperationException("a virtual clock is UTC only");
        }
        return this;
    }
}
