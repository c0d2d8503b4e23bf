package dev.warden.adopters.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/** One {@code etcd} member on free loopback ports, with a data directory of its own. */
public final class EtcdServer extends ChildServer {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

    private final int clientPort;

    private EtcdServer(int clientPort, int peerPort) {
        super(command(clientPort, peerPort), Binaries.tempDir("adopter-etcd"));
        this.clientPort = clientPort;
    }

    private static List<String> command(int clientPort, int peerPort) {
        String client = "http://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        return List.of(Binaries.find("etcd", "apt-get install -y etcd-server").toString(),
                "--name", "adopter", "--data-dir", "data",
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "adopter=" + peer);
    }

    public static EtcdServer start() {
        return Binaries.startWithRetry(() -> {
            int[] ports = Binaries.freePorts(2);
            EtcdServer server = new EtcdServer(ports[0], ports[1]);
            server.awaitReady("etcd on port " + server.clientPort, Duration.ofSeconds(30), server::healthy);
            return server;
        });
    }

    /** {@code etcd://127.0.0.1:<port>} */
    public String uri() {
        return "etcd://127.0.0.1:" + clientPort;
    }

    private boolean healthy() {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPort + "/health"))
                    .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().contains("\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
