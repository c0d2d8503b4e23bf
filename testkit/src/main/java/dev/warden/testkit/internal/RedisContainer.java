package dev.warden.testkit.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The last resort when no local {@code redis-server} exists: {@code redis:7.2} in Docker. All
 * Testcontainers code lives here so the library is only initialised on this path.
 */
public final class RedisContainer implements RedisNode {

    private static final DockerImageName IMAGE = DockerImageName.parse("redis:7.2");
    private static final int REDIS_PORT = 6379;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PING_TIMEOUT = Duration.ofMillis(500);
    private static final String NO_KILL = " needs a redis-server launched from a local binary (the Docker fallback"
            + " supports only pause and resume): install it (Debian/Ubuntu: apt-get install -y redis-server)"
            + " or set WARDEN_REDIS_SERVER to the binary";

    private final GenericContainer<?> container;
    private boolean paused;

    private RedisContainer(GenericContainer<?> container) {
        this.container = container;
    }

    /** {@code true} when a Docker engine answers. */
    public static boolean dockerAvailable() {
        return DockerClientFactory.instance().isDockerAvailable();
    }

    /** Starts the container with {@code config} as redis-server options and waits for PONG. */
    public static RedisContainer launch(Map<String, String> config) {
        List<String> command = new ArrayList<>(List.of("redis-server", "--protected-mode", "no"));
        config.forEach((name, value) -> {
            command.add("--" + name);
            command.add(value);
        });
        GenericContainer<?> container = new GenericContainer<>(IMAGE)
                .withExposedPorts(REDIS_PORT)
                .withCommand(command.toArray(String[]::new));
        container.start();
        RedisContainer redis = new RedisContainer(container);
        if (!Wait.until(START_TIMEOUT, () -> RespConnection.answersPong(redis.host(), redis.port(), PING_TIMEOUT))) {
            String logs = container.getLogs();
            container.stop();
            throw new IllegalStateException("redis container did not answer PING within "
                    + START_TIMEOUT.toSeconds() + " s; logs:\n" + logs);
        }
        return redis;
    }

    @Override
    public String host() {
        return container.getHost();
    }

    @Override
    public int port() {
        return container.getMappedPort(REDIS_PORT);
    }

    @Override
    public boolean isRunning() {
        return container.isRunning();
    }

    @Override
    public synchronized boolean isPaused() {
        return paused;
    }

    @Override
    public synchronized void pause() {
        DockerClientFactory.instance().client().pauseContainerCmd(container.getContainerId()).exec();
        paused = true;
    }

    @Override
    public synchronized void resume() {
        DockerClientFactory.instance().client().unpauseContainerCmd(container.getContainerId()).exec();
        paused = false;
    }

    @Override
    public void kill() {
        throw new UnsupportedOperationException("kill" + NO_KILL);
    }

    @Override
    public void restart() {
        throw new UnsupportedOperationException("restart" + NO_KILL);
    }

    @Override
    public synchronized void stop() {
        if (paused) {
            resume();
        }
        container.stop();
    }
}
