package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.HolderReadingDriver.Holder;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Lists a namespace's holders: {@code SCAN} with {@code MATCH {<ns>:*}:lock} (on a Cluster, on every
 * primary in turn), a page of {@value #PAGE} keys per call so no call holds the server for long, then
 * each lock key's value ({@code owner:token}) by the read script, pipelined. A lock released between
 * the two reads is left out. Cost per holder: one script call, plus its share of the scan (the scan
 * walks the whole keyspace of each primary, about {@value #PAGE} keys per round trip). Shared names'
 * keys ({@link SharedKeys}: {@code {<ns>:<name>}:shared:...}) never end in {@code }:lock}, so the match
 * skips them: listing covers locks only, not semaphores or read-write locks. Stateless.
 */
final class HolderScan {

    /** Keys a SCAN call looks at (its COUNT). */
    static final int PAGE = 1000;

    private HolderScan() {
    }

    static CompletableFuture<List<NamedHolder>> holders(StatefulConnection<String, String> connection, Scripts scripts,
                                                        String namespace, Function<String, Optional<Holder>> parse) {
        String prefix = "{" + namespace + ":";
        String suffix = "}:lock";
        ScanArgs match = ScanArgs.Builder.matches(glob(prefix) + "*" + glob(suffix)).limit(PAGE);
        CompletableFuture<List<String>> keys;
        if (connection instanceof StatefulRedisClusterConnection<String, String> cluster) {
            keys = CompletableFuture.completedFuture(new ArrayList<>());
            for (RedisClusterNode node : cluster.getPartitions()) {
                if (!node.is(RedisClusterNode.NodeFlag.UPSTREAM) || node.getSlots().isEmpty()) {
                    continue;
                }
                keys = keys.thenCompose(found -> cluster.getConnectionAsync(node.getNodeId())
                        .thenCompose(c -> scan(c.async(), match, ScanCursor.INITIAL, found)));
            }
        } else {
            @SuppressWarnings("unchecked")
            RedisKeyAsyncCommands<String, String> commands =
                    (RedisKeyAsyncCommands<String, String>) ((io.lettuce.core.api.StatefulRedisConnection<String, String>) connection).async();
            keys = scan(commands, match, ScanCursor.INITIAL, new ArrayList<>());
        }
        return keys.thenCompose(found -> {
            List<CompletableFuture<Optional<NamedHolder>>> reads = new ArrayList<>(found.size());
            for (String key : found) {
                if (key.length() < prefix.length() + suffix.length() + 1 || !key.startsWith(prefix) || !key.endsWith(suffix)) {
                    continue;
                }
                String name = key.substring(prefix.length(), key.length() - suffix.length());
                reads.add(scripts.read(key).thenApply(value -> parse.apply(value).map(h -> new NamedHolder(name, h))));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<NamedHolder> holders = new ArrayList<>(reads.size());
                reads.forEach(r -> r.join().ifPresent(holders::add));
                return holders;
            });
        });
    }

    private static CompletableFuture<List<String>> scan(RedisKeyAsyncCommands<String, String> commands, ScanArgs match,
                                                        ScanCursor cursor, List<String> found) {
        return commands.scan(cursor, match).toCompletableFuture().thenCompose((KeyScanCursor<String> page) -> {
            found.addAll(page.getKeys());
            return page.isFinished() ? CompletableFuture.completedFuture(found) : scan(commands, match, page, found);
        });
    }

    /** {@code text} as a glob that matches only itself: Redis's pattern characters escaped. */
    static String glob(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }
}
