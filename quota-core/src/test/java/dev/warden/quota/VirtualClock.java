package dev.warden.quota;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand: the engine's clock seam ({@code QuotaFactory.create(..., clock)}). Thread-safe. */
final class VirtualClock extends Clock {

    private final AtomicLong millis;

    VirtualClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    void advance(Duration by) {
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
        throw new UnsupportedOperationException("a virtual clock is UTC only");
    }
}
