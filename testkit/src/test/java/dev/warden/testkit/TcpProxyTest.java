package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warden.testkit.internal.RespConnection;
import dev.warden.testkit.internal.Wait;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TcpProxyTest {

    private static final Duration SHORT = Duration.ofMillis(300);
    private static final Duration PATIENT = Duration.ofSeconds(5);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void closeResources() throws Exception {
        for (AutoCloseable resource : resources) {
            resource.close();
        }
    }

    @Test
    @DisplayName("forwards traffic to the target")
    void forwards() {
        TcpProxy proxy = proxy();
        RespConnection client = connect(proxy, PATIENT);
        assertThat(client.call("SET", "forwarded", "yes")).isEqualTo("OK");
        assertThat(redis.server().command("GET", "forwarded")).isEqualTo("yes");
    }

    @Test
    @DisplayName("in front of several servers: one port each, and one blackhole silences all of them")
    void severalTargets() {
        try (RedisServer other = RedisServer.start()) {
            TcpProxy proxy = TcpProxy.start(List.of(
                    java.net.InetSocketAddress.createUnresolved(redis.server().host(), redis.server().port()),
                    java.net.InetSocketAddress.createUnresolved(other.host(), other.port())));
            resources.add(proxy);
            assertThat(proxy.port()).isEqualTo(proxy.portFor(redis.server().host(), redis.server().port()));
            RespConnection first = track(RespConnection.open(proxy.host(), proxy.port(), SHORT));
            RespConnection second = track(RespConnection.open(proxy.host(), proxy.portFor(other.host(), other.port()), SHORT));
            assertThat(first.call("SET", "which", "first")).isEqualTo("OK");
            assertThat(second.call("SET", "which", "second")).isEqualTo("OK");
            assertThat(redis.server().command("GET", "which")).isEqualTo("first");
            assertThat(other.command("GET", "which")).isEqualTo("second");

            proxy.blackhole();
            assertThatThrownBy(() -> first.call("PING")).hasCauseInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(() -> second.call("PING")).hasCauseInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(() -> proxy.portFor("127.0.0.1", 1)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    private RespConnection track(RespConnection c) {
        resources.add(c);
        return c;
    }

    @Test
    @DisplayName("blackhole silences proxied clients only; restore serves new connections and closes old ones")
    void blackholeAndRestore() {
        TcpProxy proxy = proxy();
        RespConnection before = connect(proxy, SHORT);
        assertThat(before.call("PING")).isEqualTo("PONG");

        proxy.blackhole();
        assertThatThrownBy(() -> before.call("PING"))
                .isInstanceOf(UncheckedIOException.class)
                .hasCauseInstanceOf(SocketTimeoutException.class);
        RespConnection during = connect(proxy, SHORT);
        assertThatThrownBy(() -> during.call("PING")).hasCauseInstanceOf(SocketTimeoutException.class);
        assertThat(redis.server().command("PING")).isEqualTo("PONG");

        proxy.restore();
        assertThat(connect(proxy, PATIENT).call("PING")).isEqualTo("PONG");
        assertThatThrownBy(() -> before.call("PING")).isInstanceOf(UncheckedIOException.class)
                .cause().isNotInstanceOf(SocketTimeoutException.class);
    }

    @Test
    @DisplayName("disconnect closes current connections and keeps listening")
    void disconnect() {
        TcpProxy proxy = proxy();
        RespConnection client = connect(proxy, PATIENT);
        assertThat(client.call("PING")).isEqualTo("PONG");

        proxy.disconnect();
        assertThatThrownBy(() -> client.call("PING")).isInstanceOf(UncheckedIOException.class)
                .cause().isNotInstanceOf(SocketTimeoutException.class);
        assertThat(connect(proxy, PATIENT).call("PING")).isEqualTo("PONG");
    }

    @Test
    @DisplayName("delay holds each direction for at least the delay; restore removes it")
    void delay() {
        TcpProxy proxy = proxy();
        RespConnection client = connect(proxy, PATIENT);
        assertThat(client.call("PING")).isEqualTo("PONG");
        Duration oneWay = Duration.ofMillis(150);

        proxy.delay(oneWay);
        long start = System.nanoTime();
        assertThat(client.call("PING")).isEqualTo("PONG");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(oneWay.multipliedBy(2));

        proxy.restore();
        assertThat(client.call("PING")).isEqualTo("PONG");
    }

    @Test
    @DisplayName("serves many concurrent connections, and close leaves no proxy thread behind")
    void manyConnectionsThenClose() throws Exception {
        TcpProxy proxy = TcpProxy.start(redis.server().host(), redis.server().port());
        int clients = 60;
        List<RespConnection> connections = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            for (int i = 0; i < clients; i++) {
                connections.add(connect(proxy, PATIENT));
            }
            List<Callable<Object>> calls = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                RespConnection connection = connections.get(i);
                String key = "many-" + i;
                calls.add(() -> {
                    connection.call("SET", key, key);
                    return connection.call("GET", key);
                });
            }
            List<Future<Object>> replies = pool.invokeAll(calls);
            for (int i = 0; i < clients; i++) {
                assertThat(replies.get(i).get()).isEqualTo("many-" + i);
            }
        } finally {
            pool.shutdownNow();
            proxy.close();
        }
        assertThat(Wait.until(PATIENT, () -> proxyThreads().isEmpty()))
                .as("proxy threads still alive: %s", proxyThreads())
                .isTrue();
        assertThatThrownBy(() -> RespConnection.open(proxy.host(), proxy.port(), SHORT))
                .isInstanceOf(UncheckedIOException.class);
    }

    private TcpProxy proxy() {
        TcpProxy proxy = TcpProxy.start(redis.server().host(), redis.server().port());
        resources.add(proxy);
        return proxy;
    }

    private RespConnection connect(TcpProxy proxy, Duration timeout) {
        RespConnection connection = RespConnection.open(proxy.host(), proxy.port(), timeout);
        resources.add(connection);
        return connection;
    }

    private static List<String> proxyThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(name -> name.startsWith("testkit-proxy-"))
                .toList();
    }
}
