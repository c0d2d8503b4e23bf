package dev.warden.adopters.shedlock;

import java.time.Instant;

/** Where the settlement job writes a settled period; a real one refuses a fencing token below the highest it saw. */
public interface SettlementLedger {

    void settled(Instant period, String instance, long fencingToken);
}
