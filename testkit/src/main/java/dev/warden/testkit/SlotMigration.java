package dev.warden.testkit;

import dev.warden.testkit.internal.RedisInfo;
import dev.warden.testkit.internal.Wait;

import java.util.ArrayList;
import java.util.List;

/**
 * One slot of a {@link RedisCluster} on its way from one primary to another, as
 * {@code redis-cli --cluster reshard} moves it: started by {@link RedisCluster#beginMigration}, the
 * keys moved with {@code MIGRATE} (some, or all), then the slot assigned to the target on every
 * primary by {@link #finish()}. Until then the source answers {@code ASK} for keys it no longer holds
 * and a command on several keys of which one node holds only some gets {@code TRYAGAIN}.
 *
 * <p>Not thread-safe: one test drives it.
 */
public final class SlotMigration {

    private final RedisCluster cluster;
    private final int slot;
    private final RedisServer source;
    private final RedisServer target;

    SlotMigration(RedisCluster cluster, int slot, RedisServer source, RedisServer target) {
        this.cluster = cluster;
        this.slot = slot;
        this.source = source;
        this.target = target;
    }

    public RedisServer source() {
        return source;
    }

    public RedisServer target() {
        return target;
    }

    /** Moves these keys of the slot now ({@code MIGRATE ... KEYS}). */
    public void migrate(String... keys) {
        List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), Integer.toString(target.port()), "", "0",
                "5000", "KEYS"));
        migrate.addAll(List.of(keys));
        source.command(migrate.toArray(String[]::new));
    }

    /** Moves every key left in the slot, in batches. */
    public void migrateAll() {
        while (true) {
            List<?> keys = (List<?>) source.command("CLUSTER", "GETKEYSINSLOT", Integer.toString(slot), "100");
            if (keys.isEmpty()) {
                return;
            }
            migrate(keys.stream().map(String::valueOf).toArray(String[]::new));
        }
    }

    /** Moves what is left, assigns the slot to the target on every primary, and waits until all nodes agree. */
    public void finish() {
        migrateAll();
        String targetId = RedisCluster.myId(target);
        List<RedisServer> order = new ArrayList<>(List.of(target, source));
        cluster.primaries().stream().filter(p -> !order.contains(p)).forEach(order::add);
        for (RedisServer p : order) {
            p.command("CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", targetId);
        }
        boolean agreed = Wait.until(RedisCluster.STABLE_TIMEOUT, () -> cluster.liveNodes().stream()
                .allMatch(n -> RedisCluster.viewOf(n).stream()
                        .anyMatch(c -> c.port() == target.port() && RedisInfo.covers(c.slots(), slot))));
        if (!agreed) {
            throw new IllegalStateException("the nodes did not agree that slot " + slot + " moved to " + target.port());
        }
    }
}
