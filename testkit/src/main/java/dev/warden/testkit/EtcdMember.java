package dev.warden.testkit;

import dev.warden.testkit.internal.EtcdHttp;
import dev.warden.testkit.internal.EtcdProcess;

import java.time.Duration;
import java.util.Objects;

/**
 * One etcd member launched by testkit, with fault controls: pause (SIGSTOP), resume, kill
 * (SIGKILL) and restart on the same ports and data directory.
 */
public final class EtcdMember {

    private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(1);
    static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final EtcdProcess process;

    EtcdMember(EtcdProcess process) {
        this.process = Objects.requireNonNull(process);
    }

    /** The member's name in its cluster, e.g. {@code m0}. */
    public String name() {
        return process.name();
    }

    public String host() {
        return EtcdProcess.HOST;
    }

    /** The client port; it stays the same across {@link #restart()}. */
    public int port() {
        return process.clientPort();
    }

    /** {@code http://127.0.0.1:port}, the member's client URL. */
    public String clientUrl() {
        return process.clientUrl();
    }

    /** {@code etcd://127.0.0.1:port} ({@code etcds://} over TLS), as Warden's endpoints setting names it. */
    public String endpoint() {
        return (clientUrl().startsWith("https:") ? "etcds://" : "etcd://") + host() + ":" + port();
    }

    /** Whether the process exists (also while paused). */
    public boolean isRunning() {
        return process.isRunning();
    }

    public boolean isPaused() {
        return process.isPaused();
    }

    /** Whether this member currently believes it is the leader; false when it does not answer. */
    public boolean isLeader() {
        return process.isRunning() && !process.isPaused()
                && EtcdHttp.isLeader(clientUrl(), STATUS_TIMEOUT).orElse(false);
    }

    /** Freezes the member (SIGSTOP): connections stay open and nothing answers. */
    public void pause() {
        process.pause();
    }

    /** Thaws a paused member (SIGCONT). */
    public void resume() {
        process.resume();
    }

    /** Kills the member (SIGKILL) and waits until it is gone. */
    public void kill() {
        process.kill();
    }

    /**
     * Starts the member again with its data and waits until it reports healthy (which needs a
     * quorum: in a cluster, restart a killed member while the others run).
     */
    public void restart() {
        process.relaunch();
        process.awaitHealthy(START_TIMEOUT);
    }

    /** The tail of the member's log, for failure messages. */
    public String logTail() {
        return process.logTail();
    }

    void stop() {
        process.stop();
    }

    void launch() {
        process.launch();
    }

    void awaitHealthy() {
        process.awaitHealthy(START_TIMEOUT);
    }

    @Override
    public String toString() {
        return "EtcdMember[" + name() + " " + clientUrl() + "]";
    }
}
