package dev.warden.spring.internal;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/** Every {@link LockObserver} bean of the application, told in order; one that throws does not silence the rest. */
public final class CompositeLockObserver implements LockObserver {

    private static final Logger log = LoggerFactory.getLogger(CompositeLockObserver.class);

    private final List<LockObserver> observers;

    private CompositeLockObserver(List<LockObserver> observers) {
        this.observers = List.copyOf(observers);
    }

    public static LockObserver of(List<LockObserver> observers) {
        return switch (observers.size()) {
            case 0 -> LockObserver.NONE;
            case 1 -> observers.get(0);
            default -> new CompositeLockObserver(observers);
        };
    }

    @Override
    public void granted(String name, long fencingToken, Duration waited) {
        each(o -> o.granted(name, fencingToken, waited));
    }

    @Override
    public void renewing(String name, long fencingToken) {
        each(o -> o.renewing(name, fencingToken));
    }

    @Override
    public void renewed(String name, long fencingToken, Duration remaining) {
        each(o -> o.renewed(name, fencingToken, remaining));
    }

    @Override
    public void releasing(String name, long fencingToken) {
        each(o -> o.releasing(name, fencingToken));
    }

    @Override
    public void released(String name, long fencingToken, ReleaseOutcome outcome) {
        each(o -> o.released(name, fencingToken, outcome));
    }

    @Override
    public void lost(LeaseLost event) {
        each(o -> o.lost(event));
    }

    @Override
    public void forceReleased(String name, long fencingToken, String operator, String why) {
        each(o -> o.forceReleased(name, fencingToken, operator, why));
    }

    private void each(Consumer<LockObserver> call) {
        for (LockObserver o : observers) {
            try {
                call.accept(o);
            } catch (RuntimeException e) {
                log.warn("lock observer {} failed", o, e);
            }
        }
    }
}
