package dev.warden.lock.spi;

import java.util.concurrent.CompletionStage;

/**
 * A driver that keeps, per namespace, the highest fencing epoch any client has used
 * ({@code warden.lock.fencing-epoch}), so that a client configured with a lower one is refused when it
 * opens rather than refused by every guarded resource after its first grant. lock-api records the
 * client's epoch as it opens and refuses to open with {@code CONFIGURATION} when a higher one is recorded;
 * a driver without it opens unchecked. lock-api uses it when the driver is one; there is no flag.
 */
public interface EpochRecordingDriver extends LockDriver {

    /**
     * Records that a client of the configured namespace uses {@code epoch}, unless a higher epoch is
     * recorded already; never lowers the record. Completes within the request timeout.
     *
     * @return the highest epoch recorded before this call (0 when none)
     */
    CompletionStage<Integer> recordEpoch(int epoch);
}
