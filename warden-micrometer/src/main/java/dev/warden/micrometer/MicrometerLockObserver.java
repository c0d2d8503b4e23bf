package dev.warden.micrometer;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * Meters of one lock client's leases: pass it to {@code LockClient.create(settings, observer)}.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><td>{@value #ACQUIRE} (timer)</td><td>wait from the acquire call to the grant, local queue included</td></tr>
 *   <tr><td>{@value #HELD} (timer)</td><td>from the grant to the release, or to the loss</td></tr>
 *   <tr><td>{@value #ACTIVE} (gauge)</td><td>leases held now</td></tr>
 *   <tr><td>{@value #RENEWALS} (counter)</td><td>renewals sent</td></tr>
 *   <tr><td>{@value #RENEWAL_LAG} (timer)</td><td>from sending a renewal to its confirmation: the time a
 *       lease's validity is extended late by; near the TTL means the lease is about to be lost</td></tr>
 *   <tr><td>{@value #LOST} (counter, {@code reason})</td><td>leases lost: {@code expired}, {@code not_owner},
 *       {@code session_lost}, {@code client_closed}, {@code forced}, ...</td></tr>
 *   <tr><td>{@value #RELEASES} (counter, {@code outcome})</td><td>releases: {@code released}, {@code lost}</td></tr>
 *   <tr><td>{@value #FORCED_RELEASES} (counter)</td><td>holds an operator ended through this client
 *       ({@code LockAdmin.forceRelease}); the evicted holder's client counts a loss with reason {@code forced}</td></tr>
 * </table>
 * Every meter carries the tags given here (the starter adds {@code backend}) and {@code kind}: {@code lock},
 * {@code semaphore} (a semaphore's permits), {@code read-write} (either side of a read-write lock) or
 * {@code election} (a leader's term: {@value #ACTIVE} with {@code kind=election} is 1 while this client
 * leads an election, and {@value #ACQUIRE}'s count with it the terms won), read from the prefix lock-api
 * gives each recipe's name ({@code semaphore:}, {@code rw:}, {@code election:}); a lock whose own name
 * starts so counts there too. The lock name is a tag only with {@link LockNameTag#INCLUDE}.
 *
 * <p>Thread-safety: called on Warden's threads, concurrently; state is two concurrent maps keyed by
 * lock name and fencing token (one entry per lease held, one per renewal in flight). Time is the
 * registry's clock, so a {@code MockClock} drives it in tests.
 */
public final class MicrometerLockObserver implements LockObserver {

    public static final String ACQUIRE = "warden.lock.acquire";
    public static final String HELD = "warden.lock.held";
    public static final String ACTIVE = "warden.lock.active";
    public static final String RENEWALS = "warden.lock.renewals";
    public static final String RENEWAL_LAG = "warden.lock.renewal.lag";
    public static final String LOST = "warden.lock.lost";
    public static final String RELEASES = "warden.lock.releases";
    public static final String FORCED_RELEASES = "warden.lock.forced.releases";

    private final MeterRegistry registry;
    private final Tags tags;
    private final LockNameTag lockNameTag;
    private final Clock clock;
    private final ConcurrentMap<Hold, Long> heldSince = new ConcurrentHashMap<>();
    private final ConcurrentMap<Hold, Long> renewalSentAt = new ConcurrentHashMap<>();

    /** Meters without lock names, with {@code tags} on each. */
    public MicrometerLockObserver(MeterRegistry registry, Iterable<Tag> tags) {
        this(registry, tags, LockNameTag.OMIT);
    }

    public MicrometerLockObserver(MeterRegistry registry, Iterable<Tag> tags, LockNameTag lockNameTag) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
        this.lockNameTag = Objects.requireNonNull(lockNameTag, "lockNameTag");
        this.clock = registry.config().clock();
        for (String kind : KINDS) {
            Gauge.builder(ACTIVE, heldSince, held -> held.keySet().stream().filter(h -> kindOf(h.name()).equals(kind)).count())
                    .description("Leases held now")
                    .tags(this.tags)
                    .tag("kind", kind)
                    .register(registry);
        }
    }

    @Override
    public void granted(String name, long fencingToken, Duration waited) {
        heldSince.put(new Hold(name, fencingToken), clock.monotonicTime());
        Timer.builder(ACQUIRE)
                .description("Wait from the acquire call to the grant")
                .tags(tagsFor(name))
                .register(registry)
                .record(waited);
    }

    @Override
    public void renewing(String name, long fencingToken) {
        renewalSentAt.put(new Hold(name, fencingToken), clock.monotonicTime());
        Counter.builder(RENEWALS)
                .description("Lease renewals sent")
                .tags(tagsFor(name))
                .register(registry)
                .increment();
    }

    @Override
    public void renewed(String name, long fencingToken, Duration remaining) {
        Long sentAt = renewalSentAt.remove(new Hold(name, fencingToken));
        if (sentAt != null) {
            Timer.builder(RENEWAL_LAG)
                    .description("From sending a renewal to its confirmation")
                    .tags(tagsFor(name))
                    .register(registry)
                    .record(clock.monotonicTime() - sentAt, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void releasing(String name, long fencingToken) {
        endHold(name, fencingToken);
    }

    @Override
    public void released(String name, long fencingToken, ReleaseOutcome outcome) {
        Counter.builder(RELEASES)
                .description("Releases of a lease, by outcome")
                .tags(tagsFor(name))
                .tag("outcome", tagValue(outcome))
                .register(registry)
                .increment();
    }

    @Override
    public void lost(LeaseLost event) {
        endHold(event.name(), event.fencingToken());
        Counter.builder(LOST)
                .description("Leases lost before their release, by reason")
                .tags(tagsFor(event.name()))
                .tag("reason", tagValue(event.reason()))
                .register(registry)
                .increment();
    }

    @Override
    public void forceReleased(String name, long fencingToken, String operator, String why) {
        // The operator and the reason are in the audit log, never in a tag: free text has no bounded cardinality.
        Counter.builder(FORCED_RELEASES)
                .description("Holds an operator force-released through this client")
                .tags(tagsFor(name))
                .register(registry)
                .increment();
    }

    private void endHold(String name, long fencingToken) {
        Hold hold = new Hold(name, fencingToken);
        renewalSentAt.remove(hold);
        Long since = heldSince.remove(hold);
        if (since != null) {
            Timer.builder(HELD)
                    .description("From the grant to the release or the loss")
                    .tags(tagsFor(name))
                    .register(registry)
                    .record(clock.monotonicTime() - since, TimeUnit.NANOSECONDS);
        }
    }

    private Tags tagsFor(String name) {
        Tags kinded = tags.and("kind", kindOf(name));
        return lockNameTag == LockNameTag.INCLUDE ? kinded.and("lock", name) : kinded;
    }

    private static final String[] KINDS = {"lock", "semaphore", "read-write", "election"};

    /** The recipe a lease belongs to, by the prefix lock-api gives its name. */
    static String kindOf(String name) {
        if (name.startsWith("semaphore:")) {
            return "semaphore";
        }
        if (name.startsWith("rw:")) {
            return "read-write";
        }
        return name.startsWith("election:") ? "election" : "lock";
    }

    /** An enum constant as a tag value: {@code NOT_OWNER} is {@code not_owner}. */
    static String tagValue(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    private record Hold(String name, long fencingToken) {
    }
}
