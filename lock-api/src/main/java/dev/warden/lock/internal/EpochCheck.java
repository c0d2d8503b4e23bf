package dev.warden.lock.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.LockDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client never opens with a fencing epoch below one its namespace's clients already used on the backend:
 * its every token would be below theirs, and every guarded resource that saw one of theirs would refuse it
 * after each of its grants. Checked once as the client opens, on a driver that records epochs
 * ({@link EpochRecordingDriver}); the client's own epoch is recorded in the same step. A user the backend
 * does not let write the record opens unchecked.
 */
final class EpochCheck {

    private static final Logger log = LoggerFactory.getLogger(EpochCheck.class);

    private EpochCheck() {
    }

    /**
     * Records the client's epoch; closes the driver and throws when a higher one is recorded, or when the
     * record cannot be read within the connect timeout.
     */
    static void refuseLowerEpoch(LockDriver driver, ClientSettings settings) {
        if (!(driver instanceof EpochRecordingDriver recording)) {
            return;
        }
        int epoch = settings.fencingEpoch();
        String namespace = settings.lock().namespace();
        int recorded;
        try {
            recorded = recording.recordEpoch(epoch).toCompletableFuture()
                    .get(settings.lock().connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            driver.close();
            throw new LockException(LockException.Reason.INTERRUPTED, "interrupted while reading the fencing epoch of namespace '"
                    + namespace + "'", e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            if (cause instanceof LockException le && le.reason() == LockException.Reason.ACCESS_DENIED) {
                // A user kept to its own locks' names (tenants sharing a namespace, docs/security.md) may not
                // write the namespace's record; the check is then skipped, never the client refused for it.
                log.info("the fencing epoch of namespace '{}' cannot be recorded with this user ({}); a lower epoch"
                        + " than the namespace used is not caught as the client opens", namespace, le.getMessage());
                return;
            }
            driver.close();
            if (cause instanceof LockException le && le.reason() != LockException.Reason.UNAVAILABLE) {
                throw le;
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not read the fencing epoch of namespace '"
                    + namespace + "' on the " + settings.lock().backend() + " backend within the connect timeout", cause);
        }
        if (recorded > epoch) {
            driver.close();
            throw new LockException(LockException.Reason.CONFIGURATION, "invalid lock configuration:\n  - warden.lock.fencing-epoch "
                    + epoch + " is below " + recorded + ", which clients of namespace '" + namespace + "' on the "
                    + settings.lock().backend() + " backend used already: an epoch never goes back (its tokens would be"
                    + " refused wherever a token of the higher one was seen)");
        }
    }
}
