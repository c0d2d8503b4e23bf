package dev.warden.testkit.internal;

/** One way of providing a PostgreSQL endpoint: an external server or a local process. */
public interface PostgresNode {

    String host();

    int port();

    String database();

    String user();

    String jdbcUrl();

    PostgresClient client();

    boolean isRunning();

    boolean isPaused();

    void pause();

    void resume();

    void kill();

    void stop();

    void restart();

    void close();
}
