package dev.warden.quota.ledger;

import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The ledger consumer's settings ({@code warden.ledger.*}), each declared once. A consumer built from a
 * settings map ({@link LedgerConsumer#builder}) reads them from it; a builder method called afterwards
 * overrides the value.
 */
public final class LedgerSettings {

    public static final String PREFIX = "warden.ledger.";

    public static final Setting<String> GROUP = Setting.text(PREFIX + "group", LedgerConsumer.DEFAULT_GROUP,
            "the consumer group: consumers of one group share the partitions");
    public static final Setting<String> CONSUMER_NAME = Setting.text(PREFIX + "consumer-name", null,
            "this consumer's name in the group, unique among the running consumers; `<host>-<pid>` when unset");
    public static final Setting<List<Integer>> PARTITIONS = Setting.of(PREFIX + "partitions", LedgerSettings::partitions,
            null, "all", "the partitions this consumer may own, comma-separated (`0,1,2`)");
    public static final Setting<Integer> BATCH_SIZE = Setting.whole(PREFIX + "batch-size", 500, 1, 10_000,
            "most entries read per partition per round, and so per transaction");
    public static final Setting<Duration> BLOCK_TIME = positive(PREFIX + "block-time", Duration.ofSeconds(1),
            "how long one read waits for new entries; below `warden.quota.request-timeout`");
    public static final Setting<Duration> SWEEP_INTERVAL = positive(PREFIX + "sweep-interval", Duration.ofSeconds(1),
            "how often owned partitions are swept for entries left pending on other consumers");
    public static final Setting<Duration> REBALANCE_INTERVAL = positive(PREFIX + "rebalance-interval",
            Duration.ofSeconds(2), "how often the consumer registers, drops lost partitions and rebalances; a consumer"
                    + " silent for three intervals is no longer counted");
    public static final Setting<Duration> RETRY_BACKOFF_INITIAL = positive(PREFIX + "retry-backoff-initial",
            Duration.ofMillis(100), "the first wait after a database or Redis failure; it doubles up to the maximum");
    public static final Setting<Duration> RETRY_BACKOFF_MAX = positive(PREFIX + "retry-backoff-max",
            Duration.ofSeconds(10), "the longest wait between retries");
    public static final Setting<Duration> LAG_INTERVAL = positive(PREFIX + "lag-interval", Duration.ofSeconds(10),
            "how often `LedgerListener.lag` is called");

    /** The table, in the order the reference lists it. */
    public static final SettingTable TABLE = new SettingTable(PREFIX, "The ledger consumer", List.of(GROUP, CONSUMER_NAME,
            PARTITIONS, BATCH_SIZE, BLOCK_TIME, SWEEP_INTERVAL, REBALANCE_INTERVAL, RETRY_BACKOFF_INITIAL,
            RETRY_BACKOFF_MAX, LAG_INTERVAL));

    private LedgerSettings() {
    }

    /**
     * Sets on {@code builder} every {@code warden.ledger.*} value {@code settings} gives.
     *
     * @return the problems, each naming its key: a value that cannot be read, a key no setting declares
     */
    static List<String> apply(Map<String, ?> settings, LedgerConsumer.Builder builder) {
        SettingTable.Values read = TABLE.read(settings, System::getenv);
        List<String> problems = new ArrayList<>(read.problems());
        read.others().keySet().forEach(k -> problems.add("unknown setting " + PREFIX + k + " (known: " + TABLE.names() + ")"));
        read.find(GROUP).ifPresent(builder::group);
        read.find(CONSUMER_NAME).ifPresent(builder::consumerName);
        read.find(PARTITIONS).ifPresent(builder::partitions);
        read.find(BATCH_SIZE).ifPresent(builder::batchSize);
        read.find(BLOCK_TIME).ifPresent(builder::blockTime);
        read.find(SWEEP_INTERVAL).ifPresent(builder::sweepInterval);
        read.find(REBALANCE_INTERVAL).ifPresent(builder::rebalanceInterval);
        if (settings.containsKey(RETRY_BACKOFF_INITIAL.key()) || settings.containsKey(RETRY_BACKOFF_MAX.key())) {
            builder.retryBackoff(read.find(RETRY_BACKOFF_INITIAL).orElse(RETRY_BACKOFF_INITIAL.defaultValue()),
                    read.find(RETRY_BACKOFF_MAX).orElse(RETRY_BACKOFF_MAX.defaultValue()));
        }
        read.find(LAG_INTERVAL).ifPresent(builder::lagInterval);
        return List.copyOf(problems);
    }

    private static Setting<Duration> positive(String key, Duration fallback, String doc) {
        return Setting.duration(key, fallback, doc).check(d -> !d.isNegative() && !d.isZero(), d -> "must be positive, was " + d);
    }

    private static List<Integer> partitions(String text) {
        try {
            return Arrays.stream(text.split(",")).map(String::trim).map(Integer::valueOf).toList();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a comma-separated list of partition numbers");
        }
    }
}
