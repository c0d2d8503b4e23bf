package dev.warden.lock.redis.internal;

import io.lettuce.core.RedisURI;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Which Redis deployment the endpoints name, parsed from them by {@link Endpoints}: one server, a
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

    /** {@code redis://host:port[/db]}, {@code redis-sentinel://s1,s2/master} or {@code redis-cluster://n1,n2}, without credentials. */
    String describe();

    Channels channels();

    /** One server: {@code redis://} or {@code rediss://}. */
    record Standalone(RedisURI uri) implements Topology {
        @Override
        public String describe() {
            return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort()
                    + (uri.getDatabase() == 0 ? "" : "/" + uri.getDatabase());
        }

        @Override
        public Channels channels() {
            return Channels.PLAIN;
        }
    }

    /** A primary found through Sentinels: a Lettuce Sentinel URI (its sentinels and master name). */
    record Sentinel(RedisURI uri) implements Topology {
        @Override
        public String describe() {
            return (uri.isSsl() ? "rediss-sentinel://" : "redis-sentinel://") + uri.getSentinels().stream()
                    .map(s -> s.getHost() + ":" + s.getPort()).collect(Collectors.joining(",")) + "/" + uri.getSentinelMasterId();
        }

        @Override
        public Channels channels() {
            return Channels.PLAIN;
        }
    }

    /** A Cluster, discovered from its seed nodes. */
    record Cluster(List<RedisURI> seeds) implements Topology {
        public Cluster {
            seeds = List.copyOf(seeds);
        }

        @Override
        public String describe() {
            return (seeds.get(0).isSsl() ? "rediss-cluster://" : "redis-cluster://")
                    + seeds.stream().map(s -> s.getHost() + ":" + s.getPort()).collect(Collectors.joining(","));
        }

        @Override
        public Channels channels() {
            return Channels.SHARDED;
        }
    }
}
