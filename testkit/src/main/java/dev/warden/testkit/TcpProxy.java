package dev.warden.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of one server, so a test can cut, freeze or slow the traffic of the
 * clients that connect through it while the server itself and every other client stay healthy. In
 * front of a topology (a Sentinel deployment, a Cluster) it listens on one port per node
 * ({@link #start(List)}), and every mode applies to all of them at once: one client cut off from the
 * whole deployment.
 *
 * <p>Forwarding modes, set by the last call to {@link #blackhole()}, {@link #delay(Duration)} or
 * {@link #restore()}:
 *
 * <ul>
 *   <li><b>forward</b> (initial): bytes pass unchanged;
 *   <li><b>blackhole</b>: connections stay open and new ones are accepted, but no byte is forwarded
 *       in either direction and the proxy stops reading, so peers see silence and, eventually,
 *       back-pressure: a network partition or a frozen peer;
 *   <li><b>delay</b>: each chunk read is held for the delay before it is written, in both
 *       directions, in order; under pipelined load later chunks wait behind earlier ones, so the
 *       delay is a lower bound.
 * </ul>
 *
 * <p>Leaving blackhole mode closes every connection that was open during it: the bytes it held back
 * are stale requests and replies, and delivering them late would be a different fault. Clients see
 * the partition heal as a dropped connection and reconnect. {@link #disconnect()} closes every
 * connection without changing the mode.
 *
 * <p>Each connection uses two daemon threads named {@code testkit-proxy-<port>-...}; {@link #close()}
 * waits until every proxy thread has ended.
 */
public final class TcpProxy implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static final int CONNECT_TIMEOUT_MILLIS = 3_000;
    private static final int BUFFER_SIZE = 16 * 1024;
    private static final long JOIN_TIMEOUT_MILLIS = 5_000;

    private enum Mode { FORWARD, BLACKHOLE, DELAY }

    /** One listening port and the address it forwards to. */
    private record Route(ServerSocket listener, InetSocketAddress target) {
    }

    private final List<Route> routes;
    private final String threadPrefix;
    private final List<Thread> acceptors;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger linkIds = new AtomicInteger();
    private final Object modeLock = new Object();

    private Mode mode = Mode.FORWARD;
    private Duration delay = Duration.ZERO;
    private volatile boolean closed;

    private TcpProxy(List<Route> routes) {
        this.routes = List.copyOf(routes);
        this.threadPrefix = "testkit-proxy-" + routes.get(0).listener().getLocalPort() + "-";
        this.acceptors = routes.stream().map(r -> newThread("accept-" + r.listener().getLocalPort(), () -> acceptLoop(r)))
                .toList();
    }

    /** Starts a proxy on a free 127.0.0.1 port that forwards to {@code targetHost:targetPort}. */
    public static TcpProxy start(String targetHost, int targetPort) {
        Objects.requireNonNull(targetHost, "targetHost");
        return start(List.of(InetSocketAddress.createUnresolved(targetHost, targetPort)));
    }

    /**
     * Starts a proxy with one free 127.0.0.1 port per target (see {@link #portFor}); blackhole, delay
     * and restore apply to all of them.
     */
    public static TcpProxy start(List<InetSocketAddress> targets) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("a proxy needs at least one target");
        }
        List<Route> routes = new java.util.ArrayList<>();
        try {
            for (InetSocketAddress target : targets) {
                routes.add(new Route(new ServerSocket(0, 128, InetAddress.getByName(HOST)), target));
            }
        } catch (IOException e) {
            routes.forEach(r -> closeQuietly(r.listener()));
            throw new UncheckedIOException("cannot listen on " + HOST, e);
        }
        TcpProxy proxy = new TcpProxy(routes);
        proxy.acceptors.forEach(proxy::launch);
        return proxy;
    }

    /** The host clients connect to instead of the target. */
    public String host() {
        return HOST;
    }

    /** The port clients connect to instead of the (first) target's. */
    public int port() {
        return routes.get(0).listener().getLocalPort();
    }

    /**
     * The port that forwards to {@code targetHost:targetPort}.
     *
     * @throws IllegalArgumentException when this proxy does not forward there
     */
    public int portFor(String targetHost, int targetPort) {
        return routes.stream().filter(r -> r.target().getHostString().equals(targetHost) && r.target().getPort() == targetPort)
                .mapToInt(r -> r.listener().getLocalPort()).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("this proxy does not forward to " + targetHost + ":" + targetPort));
    }

    /** The targets, in the order given. */
    public List<InetSocketAddress> targets() {
        return routes.stream().map(Route::target).toList();
    }

    /** How many client connections are open now, through every port (also while blackholed). */
    public int connections() {
        return links.size();
    }

    /** Stops forwarding in both directions while keeping connections open; see the class comment. */
    public void blackhole() {
        synchronized (modeLock) {
            mode = Mode.BLACKHOLE;
            links.forEach(Link::markBlackholed);
        }
    }

    /** Holds every chunk for {@code oneWay} before forwarding it, in each direction. */
    public void delay(Duration oneWay) {
        if (oneWay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative: " + oneWay);
        }
        setMode(oneWay.isZero() ? Mode.FORWARD : Mode.DELAY, oneWay);
    }

    /** Forwards normally again; connections that lived through a blackhole are closed. */
    public void restore() {
        setMode(Mode.FORWARD, Duration.ZERO);
    }

    /** Closes every current connection; the proxy keeps listening and its mode is unchanged. */
    public void disconnect() {
        links.forEach(Link::close);
    }

    /** Stops listening, closes every connection, and waits for the proxy's threads to end. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        routes.forEach(r -> closeQuietly(r.listener()));
        disconnect();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_TIMEOUT_MILLIS);
        for (Thread thread : List.copyOf(threads)) {
            long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (thread == Thread.currentThread() || remaining <= 0) {
                continue;
            }
            try {
                thread.join(remaining);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[" + routes.stream().map(r -> HOST + ":" + r.listener().getLocalPort() + " -> "
                + r.target().getHostString() + ":" + r.target().getPort()).collect(java.util.stream.Collectors.joining(", ")) + "]";
    }

    private void setMode(Mode next, Duration nextDelay) {
        synchronized (modeLock) {
            boolean leavingBlackhole = mode == Mode.BLACKHOLE;
            mode = next;
            delay = nextDelay;
            if (leavingBlackhole) {
                links.stream().filter(Link::wasBlackholed).forEach(Link::close);
            }
            modeLock.notifyAll();
        }
    }

    private void acceptLoop(Route route) {
        while (!closed) {
            Socket client;
            try {
                client = route.listener().accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            Socket upstream = new Socket();
            try {
                client.setTcpNoDelay(true);
                upstream.connect(new InetSocketAddress(route.target().getHostString(), route.target().getPort()),
                        CONNECT_TIMEOUT_MILLIS);
                upstream.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            Link link = new Link(linkIds.incrementAndGet(), client, upstream);
            links.add(link);
            synchronized (modeLock) {
                if (mode == Mode.BLACKHOLE) {
                    link.markBlackholed();
                }
            }
            if (closed) {
                link.close();
            } else {
                link.start();
            }
        }
    }

    /**
     * Waits while the proxy is blackholed, then returns the delay to apply, or {@code null} if the
     * link was closed meanwhile.
     */
    private Duration awaitForwarding(Link link) throws InterruptedException {
        synchronized (modeLock) {
            while (mode == Mode.BLACKHOLE && !link.isClosed()) {
                modeLock.wait();
            }
            return link.isClosed() ? null : delay;
        }
    }

    private Thread newThread(String suffix, Runnable body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } finally {
                threads.remove(Thread.currentThread());
            }
        }, threadPrefix + suffix);
        thread.setDaemon(true);
        return thread;
    }

    private void launch(Thread thread) {
        threads.add(thread);
        thread.start();
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Already closed or broken: either way it is gone.
        }
    }

    /** One client connection and its connection to the target, pumped by two threads. */
    private final class Link {

        private final Socket client;
        private final Socket upstream;
        private final Thread up;
        private final Thread down;
        private volatile boolean closed;
        private volatile boolean blackholed;

        Link(int id, Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
            this.up = newThread(id + "-up", () -> pump(client, upstream));
            this.down = newThread(id + "-down", () -> pump(upstream, client));
        }

        void start() {
            launch(up);
            launch(down);
        }

        void markBlackholed() {
            blackholed = true;
        }

        boolean wasBlackholed() {
            return blackholed;
        }

        boolean isClosed() {
            return closed;
        }

        void close() {
            if (closed) {
                return;
            }
            closed = true;
            links.remove(this);
            closeQuietly(client);
            closeQuietly(upstream);
            synchronized (modeLock) {
                modeLock.notifyAll();
            }
            for (Thread thread : List.of(up, down)) {
                if (thread != Thread.currentThread()) {
                    thread.interrupt();
                }
            }
        }

        private void pump(Socket from, Socket to) {
            byte[] buffer = new byte[BUFFER_SIZE];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                while (true) {
                    Duration hold = awaitForwarding(this);
                    if (hold == null) {
                        return;
                    }
                    int read = in.read(buffer);
                    if (read < 0) {
                        return;
                    }
                    hold = awaitForwarding(this);
                    if (hold == null) {
                        return;
                    }
                    if (!hold.isZero()) {
                        Thread.sleep(hold.toMillis(), hold.toNanosPart() % 1_000_000);
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // The connection is over: closed by a peer, by disconnect(), or by close().
            } finally {
                close();
            }
        }
    }
}
