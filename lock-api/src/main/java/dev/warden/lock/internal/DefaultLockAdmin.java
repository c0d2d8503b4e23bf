package dev.warden.lock.internal;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.internal.config.LockNames;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.HolderReadingDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** The operator's view of a client's namespace: a holder read and an audited forced release. Stateless. */
final class DefaultLockAdmin implements LockAdmin {

    /** Forced releases are logged here, at WARN, whatever the rest of Warden logs. */
    private static final Logger audit = LoggerFactory.getLogger("dev.warden.lock.audit");

    private final ClientParts parts;

    DefaultLockAdmin(ClientParts parts) {
        this.parts = parts;
    }

    @Override
    public Optional<Holding> holder(String name) {
        LockNames.validate(name);
        parts.registry().ensureOpen();
        if (!(parts.driver() instanceof HolderReadingDriver reader)) {
            throw new LockException(LockException.Reason.CONFIGURATION, "the " + parts.config().backend()
                    + " driver cannot read a lock's holder");
        }
        return await("reading the holder of lock '" + name + "'", () -> reader.holder(name))
                .map(h -> new Holding(name, h.owner(), FencingEpoch.compose(parts.settings().fencingEpoch(), h.token())));
    }

    @Override
    public List<Holding> holders() {
        parts.registry().ensureOpen();
        if (!(parts.driver() instanceof HolderListingDriver lister)) {
            throw new LockException(LockException.Reason.CONFIGURATION, "the " + parts.config().backend()
                    + " driver cannot list a namespace's holders");
        }
        Duration limit = parts.config().requestTimeout().multipliedBy(10);
        List<HolderListingDriver.NamedHolder> listed = await("listing the holders of namespace '" + parts.config().namespace()
                + "'", limit, () -> lister.holders(limit));
        return listed.stream().map(n -> new Holding(n.name(), n.holder().owner(),
                        FencingEpoch.compose(parts.settings().fencingEpoch(), n.holder().token())))
                .sorted(Comparator.comparing(Holding::name)).toList();
    }

    @Override
    public boolean forceRelease(String name, long token, String operator, String why) {
        LockNames.validate(name);
        requireText(operator, "operator");
        requireText(why, "why");
        parts.registry().ensureOpen();
        if (!(parts.driver() instanceof HolderEvictingDriver evicting)) {
            throw new LockException(LockException.Reason.CONFIGURATION, "the " + parts.config().backend()
                    + " driver cannot end another client's hold (in the migrating step of a switch, end it after the step)");
        }
        if (FencingEpoch.epochOf(token) != parts.settings().fencingEpoch()) {
            audit.warn("forced release of lock '{}' by {} refused: token {} is of fencing epoch {}, this client's is {} ({})",
                    name, Redaction.redact(operator), token, FencingEpoch.epochOf(token), parts.settings().fencingEpoch(),
                    Redaction.redact(why));
            return false;
        }
        boolean evicted = await("the forced release of lock '" + name + "'",
                () -> evicting.evict(name, FencingEpoch.backendTokenOf(token)));
        if (evicted) {
            audit.warn("lock '{}' force-released by {}: {} (token {})", name, Redaction.redact(operator), Redaction.redact(why), token);
            parts.observer().forceReleased(name, token, operator, why);
        } else {
            audit.warn("forced release of lock '{}' by {} found no hold with token {} ({})", name, Redaction.redact(operator),
                    token, Redaction.redact(why));
        }
        return evicted;
    }

    private <T> T await(String what, Supplier<CompletionStage<T>> call) {
        return await(what, parts.config().requestTimeout().multipliedBy(2), call);
    }

    private <T> T await(String what, Duration limit, Supplier<CompletionStage<T>> call) {
        try {
            return Await.uninterruptibly(call.get().toCompletableFuture(), limit.plus(parts.config().requestTimeout()));
        } catch (ExecutionException e) {
            Throwable cause = Outage.unwrap(e.getCause());
            if (cause instanceof LockException le) {
                throw new LockException(le.reason(), what + ": " + le.getMessage(), le);
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, what + " failed", cause);
        } catch (TimeoutException e) {
            throw new LockException(LockException.Reason.UNAVAILABLE, what + " took longer than " + limit.toMillis() + " ms", e);
        }
    }

    private static void requireText(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException("a forced release needs a non-blank " + what + " for its audit");
        }
    }
}
