package dev.warden.lock.internal;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/** Shields the keeper and the acquire loop from an observer that throws. */
final class SafeObserver implements LockObserver {

    private static final Logger log = LoggerFactory.getLogger(SafeObserver.class);

    private final LockObserver delegate;

    SafeObserver(LockObserver delegate) {
        this.delegate = delegate;
    }

    @Override
    public void granted(String name, long fencingToken, Duration waited) {
        guard(() -> delegate.granted(name, fencingToken, waited));
    }

    @Override
    public void renewing(String name, long fencingToken) {
        guard(() -> delegate.renewing(name, fencingToken));
    }

    @Override
    public void renewed(String name, long fencingToken, Duration remaining) {
        guard(() -> delegate.renewed(name, fencingToken, remaining));
    }

    @Override
    public void releasing(String name, long fencingToken) {
        guard(() -> delegate.releasing(name, fencingToken));
    }

    @Override
    public void released(String name, long fencingToken, ReleaseOutcome outcome) {
        guard(() -> delegate.released(name, fencingToken, outcome));
    }

    @Override
    public void lost(LeaseLost event) {
        guard(() -> delegate.lost(event));
    }

    @Override
    public void forceReleased(String name, long fencingToken, String operator, String why) {
        guard(() -> delegate.forceReleased(name, fencingToken, operator, why));
    }

    private void guard(Runnable call) {
        try {
            call.run();
        } catch (VirtualMachineError fatal) {
            throw fatal;
        } catch (Throwable e) {
            // Even an AssertionError from a test's observer must not stop a grant, renewal or release.
            log.warn("lock observer {} failed", delegate.getClass().getName(), e);
        }
    }
}
