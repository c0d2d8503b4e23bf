package dev.warden.adopters.shedlock;

import dev.warden.lock.Lease;
import dev.warden.shedlock.ShedLockLease;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/** Settles each 4-second period once, on whichever instance's scheduler takes the lock first. */
@Component
public class Settlement {

    /** Every 4 s on the host's clock. */
    public static final Duration PERIOD = Duration.ofSeconds(4);

    private final SettlementLedger ledger;
    private final Clock clock;
    private final String instance;

    public Settlement(SettlementLedger ledger, Clock clock, @Value("${settlement.instance}") String instance) {
        this.ledger = ledger;
        this.clock = clock;
        this.instance = instance;
    }

    /**
     * lockAtLeastFor 3 s: shorter than the period, so the next period's run finds the lock free, and longer than
     * the skew between the hosts' clocks (up to 2 s), so a late host firing for a period already run finds the
     * lock still held and skips. lockAtMostFor 5 s ends a run that hangs.
     */
    @Scheduled(cron = "*/4 * * * * *")
    @SchedulerLock(name = "settlement", lockAtMostFor = "5s", lockAtLeastFor = "3s")
    public void settle() {
        LockAssert.assertLocked();
        Lease lease = ShedLockLease.get();                   // this run's Warden lease
        ledger.settled(periodOf(clock.instant()), instance, lease.fencingToken());
    }

    /** The period a fire at {@code now} (on the host's clock) is for: {@code now} rounded to the nearest period start. */
    public static Instant periodOf(Instant now) {
        long period = PERIOD.toMillis();
        return Instant.ofEpochMilli(Math.floorDiv(now.toEpochMilli() + period / 2, period) * period);
    }
}
