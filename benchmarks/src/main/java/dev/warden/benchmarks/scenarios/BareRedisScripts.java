package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The limit of the uncontended lock on this machine: the two round trips Warden's Redis lock
 * makes (its own acquire and release scripts), sent bare through Lettuce's synchronous API on one
 * shared connection, with no lock library around them: no lease, no keeper, no queue.
 */
public final class BareRedisScripts implements Workload {

    private final String redisUri;
    private final String namespace;
    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private String acquire;
    private String release;

    public BareRedisScripts(String redisUri, String namespace) {
        this.redisUri = redisUri;
        this.namespace = namespace;
    }

    @Override
    public String scenario() {
        return "lock, uncontended (a name per thread)";
    }

    @Override
    public Server server() {
        return Server.REDIS;
    }

    @Override
    public String implementation() {
        return "limit: the 2 scripts bare (lettuce)";
    }

    @Override
    public void setUp(int threads) throws IOException {
        client = RedisClient.create(redisUri);
        connection = client.connect();
        acquire = connection.sync().scriptLoad(script("acquire.lua"));
        release = connection.sync().scriptLoad(script("release.lua"));
    }

    @Override
    public Operation operation(int index) {
        RedisCommands<String, String> redis = connection.sync();
        String tag = "{" + namespace + ":bench-" + index + "}";
        String[] acquireKeys = {tag + ":lock", tag + ":fence", tag + ":waiting"};
        String[] releaseKeys = {tag + ":lock"};
        String owner = "bare-" + index;
        return () -> {
            List<Long> granted = redis.evalsha(acquire, ScriptOutputType.MULTI, acquireKeys, owner, "30000", "2500", "1",
                    tag + ":contenders", "PUBLISH");
            if (granted.get(0) != 1L) {
                throw new IllegalStateException("lock " + tag + " was held");
            }
            // The release script publishes on the release channel with the command it is given, as the driver's does.
            Long released = redis.evalsha(release, ScriptOutputType.INTEGER, releaseKeys, owner + ":" + granted.get(1),
                    tag + ":released", "PUBLISH");
            if (released != 1L) {
                throw new IllegalStateException("lock " + tag + " was not released");
            }
        };
    }

    private static String script(String name) throws IOException {
        try (InputStream in = BareRedisScripts.class.getResourceAsStream("/dev/warden/lock/redis/" + name)) {
            if (in == null) {
                throw new IOException("lock-redis script " + name + " not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
        }
        if (client != null) {
            client.shutdown();
        }
    }
}
