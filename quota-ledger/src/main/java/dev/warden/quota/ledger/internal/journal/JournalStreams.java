package dev.warden.quota.ledger.internal.journal;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.ScriptRunner;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs.StreamOffset;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessage;
import io.lettuce.core.output.StreamReadOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The journal stream protocol, in one place: the consumer group ({@code XGROUP CREATE}), reads
 * ({@code XREADGROUP}), claims ({@code XAUTOCLAIM}), acknowledgement with trimming (one script:
 * {@code XACK} then {@code XTRIM MINID} below the oldest unacknowledged entry), and the reads
 * reconciliation and the backlog need ({@code XINFO GROUPS}, {@code XPENDING}, {@code XRANGE}). The
 * loop, the policy and the lifecycle live in the consumer and the reconciler.
 *
 * <p>On a Cluster each partition's stream lives on the primary of its slot, and a command may name
 * the keys of one slot only: new entries are read with one non-blocking {@code XREADGROUP} per
 * stream, sent together (each to its node); when none has anything, one stream's read blocks for a
 * share of the block time, taking the streams in turn, so an idle consumer neither spins nor leaves a
 * partition unread for longer than the block time.
 *
 * <p>Not thread-safe: one per thread (its connection blocks on reads).
 */
public final class JournalStreams {

    /** A page of stream entries, in id order. */
    public record Page(List<StreamMessage<String, String>> entries, boolean more) {
    }

    /** What {@link #ackAndTrim} did. */
    public record Trim(long acknowledged, long removed, String floor) {
    }

    /** Entries pending on the group, and entries not yet delivered to it. */
    public record Backlog(long pending, long undelivered) {
        public long total() {
            return pending + undelivered;
        }
    }

    private final RedisConnection connection;
    private final RedisClusterCommands<String, String> redis;
    private final ScriptRunner scripts;
    private final String group;
    private final Consumer<String> me;
    private final long waitNanos;
    /** Which stream an idle Cluster read blocks on next. */
    private int turn;

    private static final Duration MIN_BLOCK = Duration.ofMillis(10);

    /**
     * @param connection its own connection (reads block on it)
     * @param consumer   this consumer's name in the group (null for readers that never consume)
     * @param requestTimeout the deadline of a call; script waits allow a reload and a retry
     */
    public JournalStreams(RedisConnection connection, String group, String consumer, Duration requestTimeout) {
        this.connection = connection;
        this.redis = connection.sync();
        this.scripts = new ScriptRunner(connection, requestTimeout);
        this.group = group;
        this.me = consumer == null ? null : Consumer.from(group, consumer);
        this.waitNanos = requestTimeout.multipliedBy(3).plusSeconds(1).toNanos();
    }

    public RedisClusterCommands<String, String> commands() {
        return redis;
    }

    public ScriptRunner scripts() {
        return scripts;
    }

    /** Creates the group at the start of the stream (and the stream) when missing; an existing group is kept. */
    public void ensureGroup(String stream) {
        try {
            redis.xgroupCreate(StreamOffset.from(stream, "0-0"), group, XGroupCreateArgs.Builder.mkstream());
        } catch (RedisBusyException e) {
            // BUSYGROUP: it exists.
        } catch (RedisCommandExecutionException e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("BUSYGROUP")) {
                throw e;
            }
        }
    }

    /** New entries of the given streams, at most {@code count} per stream, blocking up to {@code block}; by stream. */
    public Map<String, List<StreamMessage<String, String>>> readNew(List<String> streams, int count, Duration block) {
        if (connection.isCluster() && streams.size() > 1) {
            return readNewStreamByStream(streams, count, block);
        }
        List<StreamMessage<String, String>> messages = await(readNew(streams, XReadArgs.Builder.count(count).block(block)),
                "read new journal entries");
        Map<String, List<StreamMessage<String, String>>> byStream = new LinkedHashMap<>();
        if (messages != null) {
            for (StreamMessage<String, String> m : messages) {
                byStream.computeIfAbsent(m.getStream(), k -> new ArrayList<>()).add(m);
            }
        }
        return byStream;
    }

    private Map<String, List<StreamMessage<String, String>>> readNewStreamByStream(List<String> streams, int count,
                                                                                   Duration block) {
        Map<String, java.util.concurrent.CompletableFuture<List<StreamMessage<String, String>>>> reads = new LinkedHashMap<>();
        for (String stream : streams) {
            reads.put(stream, readNew(List.of(stream), XReadArgs.Builder.count(count)));
        }
        Map<String, List<StreamMessage<String, String>>> byStream = new LinkedHashMap<>();
        for (Map.Entry<String, java.util.concurrent.CompletableFuture<List<StreamMessage<String, String>>>> e : reads.entrySet()) {
            List<StreamMessage<String, String>> messages = await(e.getValue(), "read new journal entries");
            if (messages != null && !messages.isEmpty()) {
                byStream.put(e.getKey(), messages);
            }
        }
        if (!byStream.isEmpty()) {
            return byStream;
        }
        String next = streams.get(Math.floorMod(turn++, streams.size()));
        Duration share = block.dividedBy(streams.size());
        List<StreamMessage<String, String>> waited = await(readNew(List.of(next), XReadArgs.Builder.count(count)
                .block(share.compareTo(MIN_BLOCK) < 0 ? MIN_BLOCK : share)), "read new journal entries");
        if (waited != null && !waited.isEmpty()) {
            byStream.put(next, waited);
        }
        return byStream;
    }

    /**
     * {@code XREADGROUP ... STREAMS <streams> > ...}: as Lettuce's own, with the entries' text decoded by
     * {@link JournalText}. On a Cluster, the streams must be of one slot (the first routes the command).
     */
    private java.util.concurrent.CompletableFuture<List<StreamMessage<String, String>>> readNew(List<String> streams,
                                                                                               XReadArgs read) {
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("GROUP").add(group).add(me.getName());
        read.build(args);
        args.add("STREAMS");
        streams.forEach(args::addKey);
        streams.forEach(s -> args.add(">"));
        return connection.async().dispatch(CommandType.XREADGROUP, new StreamReadOutput<>(JournalText.CODEC), args)
                .toCompletableFuture();
    }

    /**
     * Claims entries pending on any consumer of the group that have been idle at least {@code minIdle},
     * from {@code cursor}, for this consumer. Entries deleted meanwhile come back without a body.
     *
     * @return the claimed entries and the cursor to continue from ({@code 0-0} when done)
     */
    public Claimed claim(String stream, String cursor, Duration minIdle, int count) {
        ClaimedMessages<String, String> claimed = redis.xautoclaim(stream, new XAutoClaimArgs<String>()
                .consumer(me).minIdleTime(minIdle).startId(cursor).count(count));
        return new Claimed(claimed.getMessages(), claimed.getId());
    }

    /** A page of {@link #claim}. */
    public record Claimed(List<StreamMessage<String, String>> entries, String next) {
        public boolean done() {
            return next == null || next.equals("0-0");
        }
    }

    /**
     * Whether any entry older than a batch's first is pending on the group (on any consumer), for several
     * streams at once, pipelined: the streams (of {@code firstIds}, stream to the first id of a batch) with one.
     */
    public Set<String> pendingBeforeAll(Map<String, String> firstIds) {
        Map<String, java.util.concurrent.CompletableFuture<List<PendingMessage>>> calls = new LinkedHashMap<>();
        firstIds.forEach((stream, id) -> calls.put(stream, connection.async()
                .xpending(stream, group, Range.create("-", "(" + id), Limit.from(1)).toCompletableFuture()));
        Set<String> behind = new HashSet<>();
        for (Map.Entry<String, java.util.concurrent.CompletableFuture<List<PendingMessage>>> e : calls.entrySet()) {
            if (!await(e.getValue(), "read the pending entries of " + e.getKey()).isEmpty()) {
                behind.add(e.getKey());
            }
        }
        return behind;
    }

    /**
     * Acknowledges {@code ids} ({@code XACK}), then trims the stream below the oldest entry the group has not
     * acknowledged (one script, which reads that floor and trims at it): nothing unacknowledged (and so
     * nothing not yet in the database) is ever trimmed. The two are sent together; a failure between them
     * leaves entries the next trim removes.
     */
    public Trim ackAndTrim(String stream, List<String> ids) {
        return ackAndTrimAll(Map.of(stream, ids)).get(stream);
    }

    /**
     * Deletes from the group the other consumers that hold nothing pending of this stream and have been silent
     * at least {@code idle} (checked and deleted atomically); how many.
     */
    public long forgetIdleConsumers(String stream, Duration idle) {
        List<Object> reply = await(scripts.run(LedgerScripts.FORGET_CONSUMERS, new String[]{stream}, group,
                me == null ? "" : me.getName(), Long.toString(idle.toMillis())), "forget idle consumers");
        return Long.parseLong(String.valueOf(reply.get(1)));
    }

    /** {@link #ackAndTrim} for several streams (stream to ids), pipelined; the trims by stream. */
    public Map<String, Trim> ackAndTrimAll(Map<String, List<String>> idsByStream) {
        // XACK itself rather than inside the script: the script would take every id through Lua first.
        Map<String, java.util.concurrent.CompletableFuture<Long>> acks = new LinkedHashMap<>();
        Map<String, java.util.concurrent.CompletableFuture<List<Object>>> trims = new LinkedHashMap<>();
        idsByStream.forEach((stream, ids) -> {
            acks.put(stream, ids.isEmpty() ? java.util.concurrent.CompletableFuture.completedFuture(0L)
                    : connection.async().xack(stream, group, ids.toArray(String[]::new)).toCompletableFuture());
            trims.put(stream, scripts.run(LedgerScripts.ACK_TRIM, new String[]{stream}, group));
        });
        Map<String, Trim> done = new LinkedHashMap<>();
        for (Map.Entry<String, java.util.concurrent.CompletableFuture<List<Object>>> e : trims.entrySet()) {
            long acknowledged = await(acks.get(e.getKey()), "acknowledge a batch");
            Trim trim = trim(e.getKey(), await(e.getValue(), "trim a journal"));
            done.put(e.getKey(), new Trim(acknowledged, trim.removed(), trim.floor()));
        }
        return done;
    }

    private static Trim trim(String stream, List<Object> reply) {
        if (reply.size() < 4 || !"trimmed".equals(reply.get(0))) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected reply " + reply + " to acknowledging a batch of " + stream);
        }
        return new Trim(Long.parseLong((String) reply.get(1)), Long.parseLong((String) reply.get(2)), (String) reply.get(3));
    }

    /** The group's backlog on a stream; everything is undelivered when the group is missing. */
    public Backlog backlog(String stream) {
        return backlogs(List.of(stream)).get(stream);
    }

    /** {@link #backlog} of several streams, their groups read in one pipelined round trip; by stream. */
    public Map<String, Backlog> backlogs(List<String> streams) {
        Map<String, java.util.concurrent.CompletableFuture<List<Object>>> reads = new LinkedHashMap<>();
        for (String stream : streams) {
            reads.put(stream, connection.async().xinfoGroups(stream).toCompletableFuture());
        }
        Map<String, Backlog> backlogs = new LinkedHashMap<>();
        for (Map.Entry<String, java.util.concurrent.CompletableFuture<List<Object>>> e : reads.entrySet()) {
            Map<String, Object> info;
            try {
                info = ofGroup(await(e.getValue(), "read the consumer groups of " + e.getKey()));
            } catch (RedisCommandExecutionException noSuchKey) {
                info = null;
            }
            backlogs.put(e.getKey(), backlog(e.getKey(), info));
        }
        return backlogs;
    }

    private Backlog backlog(String stream, Map<String, Object> info) {
        if (info == null) {
            return new Backlog(0, redis.exists(stream) == 0 ? 0 : redis.xlen(stream));
        }
        long pending = toLong(info.get("pending"));
        Object lag = info.get("lag");
        long undelivered;
        if (lag != null) {
            undelivered = toLong(lag);
        } else {
            // Redis reports no lag after deletions in the stream: count what lies beyond the last delivered id.
            undelivered = redis.xrange(stream, Range.create("(" + info.get("last-delivered-id"), "+")).size();
        }
        return new Backlog(pending, undelivered);
    }

    /** The group's last delivered id on the stream, or null when the stream or the group is missing. */
    public String lastDelivered(String stream) {
        Map<String, Object> info = groupInfo(stream);
        return info == null ? null : String.valueOf(info.get("last-delivered-id"));
    }

    /** Every id pending on the group (any consumer), oldest first, read in pages. */
    public Set<String> pendingIds(String stream, int page) {
        Set<String> ids = new HashSet<>();
        String from = "-";
        while (true) {
            List<PendingMessage> batch = redis.xpending(stream, group, Range.create(from, "+"), Limit.from(page));
            for (PendingMessage m : batch) {
                ids.add(m.getId());
            }
            if (batch.size() < page) {
                return ids;
            }
            from = "(" + batch.get(batch.size() - 1).getId();
        }
    }

    /**
     * Entries from {@code start} on, at most {@code count}: {@code start} is {@code -} (the beginning),
     * an id (inclusive) or {@code (id} (exclusive).
     */
    public Page from(String stream, String start, int count) {
        List<StreamMessage<String, String>> entries = redis.xrange(stream, Range.create(start, "+"), Limit.from(count));
        return new Page(entries, entries.size() == count);
    }

    /** The id of the stream's last entry, {@code 0-0} when it is empty or missing. */
    public String lastId(String stream) {
        List<StreamMessage<String, String>> tail = redis.xrevrange(stream, Range.create("-", "+"), Limit.from(1));
        return tail.isEmpty() ? "0-0" : tail.get(0).getId();
    }

    /** Whether an error says the group is gone (Redis lost its data). */
    public static boolean isNoGroup(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().startsWith("NOGROUP")) {
                return true;
            }
        }
        return false;
    }

    private Map<String, Object> groupInfo(String stream) {
        try {
            return ofGroup(redis.xinfoGroups(stream));
        } catch (RedisCommandExecutionException e) {
            return null; // ERR no such key
        }
    }

    /** This group's entry of an {@code XINFO GROUPS} reply, or null. */
    private Map<String, Object> ofGroup(List<Object> groups) {
        for (Object g : groups) {
            Map<String, Object> info = asMap(g);
            if (group.equals(info.get("name"))) {
                return info;
            }
        }
        return null;
    }

    private <T> T await(java.util.concurrent.CompletableFuture<T> call, String what) {
        try {
            return call.get(waitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while waiting for Redis to " + what, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis did not " + what + " in time", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new QuotaException(Reason.UNAVAILABLE, "Redis failed to " + what + ": " + cause.getMessage(), cause);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object g) {
        if (g instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        Map<String, Object> map = new HashMap<>();
        List<Object> list = (List<Object>) g;
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put(String.valueOf(list.get(i)), list.get(i + 1));
        }
        return map;
    }

    private static long toLong(Object o) {
        return o instanceof Number n ? n.longValue() : Long.parseLong(String.valueOf(o));
    }
}
