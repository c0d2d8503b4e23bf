package dev.warden.lock.redis.internal;

import dev.warden.redis.internal.RedisEndpoint;
import io.lettuce.core.RedisURI;

import java.util.List;

/**
 * Which Redis deployment the endpoints name ({@link RedisEndpoint} reads them): one server, a
 * Sentinel-monitored primary, or a Cluster reached through seed nodes. Each says how it is named in
 * messages (never with credentials) and how release messages travel.
 */
sealed interface Topology {

    /** How a release wakes waiters: pub/sub (to every node on a Cluster), or sharded pub/sub (the slot's shard only). */
    enum Channels {
        /** {@code PUBLISH} / {@code SUBSCRIBE}. */
        PLAIN("PUBLISH"),
        /** {@code SPUBLISH} / {@code SSUBSCRIBE} (Redis 7): the message stays in the shard of the lock's slot. */
        SHARDED("SPUBLISH");

        /** The command the release scripts publish with. */
        final String publish;

        Channels(String publish) {
            this.publish = publish;
        }
    }

    /**
     * The topology of endpoints that {@link RedisEndpoint#problems} accepted.
     *
     * @throws IllegalArgumentException naming every problem when it did not
     */
    static Topology of(List<String> endpoints) {
        RedisEndpoint e = RedisEndpoint.parse(endpoints);
        return switch (e.kind()) {
            case SERVER -> new Standalone(e.uris().get(0), e.toString());
            case SENTINEL -> new Sentinel(e.uris().get(0), e.toString());
            case CLUSTER -> new Cluster(e.uris(), e.toString());
        };
    }

    /** {@code redis://host:port[/db]}, {@code redis-sentinel://s1,s2/master} or {@code redis-cluster://n1,n2}, without credentials. */
    String describe();

    Channels channels();

    /** One server: {@code redis://} or {@code rediss://}. */
    record Standalone(RedisURI uri, String describe) implements Topology {
        @Override
        public Channels channels() {
            return Channels.PLAIN;
        }
    }

    /** A primary found through Sentinels: a Lettuce Sentinel URI (its sentinels and master name). */
    record Sentinel(RedisURI uri, String describe) implements Topology {
        @Override
        public Channels channels() {
            return Channels.PLAIN;
        }
    }

    /** A Cluster, discovered from its seed nodes. */
    record Cluster(List<RedisURI> seeds, String describe) implements Topology {
        public Cluster {
            seeds = List.copyOf(seeds);
        }

        @Override
        public Channels channels() {
            return Channels.SHARDED;
        }
    }
}
