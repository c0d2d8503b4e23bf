package dev.warden.testkit.internal;

/** One way of providing a Redis endpoint: an external server, a local process, or a container. */
public interface RedisNode {

    String host();

    int port();

    boolean isRunning();

    boolean isPaused();

    void pause();

    void resume();

    void kill();

    void restart();

    void stop();
}
