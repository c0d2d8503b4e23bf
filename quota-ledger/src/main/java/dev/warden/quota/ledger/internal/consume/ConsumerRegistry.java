package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.internal.journal.LedgerScripts;
import dev.warden.quota.redis.KeyLayout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The consumers' registry in Redis: a sorted set of consumer names scored by their last heartbeat on
 * the server's clock. Each consumer's fair share of the partitions is computed from the live names.
 * Used on the consumer's thread.
 */
public final class ConsumerRegistry {

    private static final Logger log = LoggerFactory.getLogger(ConsumerRegistry.class);

    private final JournalStreams streams;
    private final String key;
    private final String consumerName;
    private final long expiryMillis;

    public ConsumerRegistry(JournalStreams streams, KeyLayout layout, ConsumerSettings settings) {
        this.streams = streams;
        this.key = key(layout, settings);
        this.consumerName = settings.consumerName();
        this.expiryMillis = settings.rebalanceInterval().multipliedBy(3).toMillis();
    }

    /**
     * The registry a consumer counts itself in: one per group, and per candidate set when partitions
     * were chosen ({@link dev.warden.quota.ledger.LedgerConsumer.Builder#partitions}), so consumers share fairly with those that
     * may take the same partitions.
     */
    private static String key(KeyLayout layout, ConsumerSettings settings) {
        if (!settings.chosenPartitions()) {
            return layout.ledgerKey(settings.group() + ":consumers");
        }
        CRC32 crc = new CRC32();
        crc.update(settings.candidates().toString().getBytes(StandardCharsets.US_ASCII));
        return layout.ledgerKey(settings.group() + ":consumers:" + Long.toHexString(crc.getValue()));
    }

    /** Records this consumer's heartbeat, forgets consumers silent for three rebalance intervals; the live names in order. */
    List<String> heartbeat() {
        List<Object> reply = streams.scripts().run(LedgerScripts.HEARTBEAT, new String[]{key}, consumerName,
                Long.toString(expiryMillis)).join();
        if (reply.isEmpty() || !"live".equals(reply.get(0))) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected heartbeat reply " + reply);
        }
        List<String> live = new ArrayList<>();
        for (int i = 1; i < reply.size(); i++) {
            live.add((String) reply.get(i));
        }
        return live;
    }

    /** Leaves the registry (best effort: it forgets silent consumers anyway). */
    void leave() {
        try {
            streams.commands().zrem(key, consumerName);
        } catch (RuntimeException e) {
            log.debug("could not leave the ledger consumers' registry (it forgets silent consumers)", e);
        }
    }
}
