package dev.warden.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;
import java.security.cert.X509Certificate;
import java.security.cert.CertificateFactory;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority with a server certificate (for 127.0.0.1 and localhost) and a
 * client certificate, generated at test time with the JDK's {@code keytool} (no extra dependency),
 * valid for two days, in PEM for servers and PKCS12 for Java clients. Every store's password is
 * {@link #STORE_PASSWORD}: test material, never a real secret.
 */
public final class TlsMaterial {

    public static final String STORE_PASSWORD = "testkit-store";

    private final Path dir;
    private final boolean serverExpired;

    private TlsMaterial(Path dir, boolean serverExpired) {
        this.dir = dir;
        this.serverExpired = serverExpired;
    }

    /** Generates a new CA and its certificates in {@code dir} (created if needed); takes a few seconds. */
    public static TlsMaterial generate(Path dir) {
        return generate(dir, false);
    }

    /**
     * Like {@link #generate}, but the server certificate's validity ended yesterday (it started three
     * days ago and lasted one): a client trusting the CA must still refuse the server.
     */
    public static TlsMaterial generateWithExpiredServer(Path dir) {
        return generate(dir, true);
    }

    private static TlsMaterial generate(Path dir, boolean serverExpired) {
        try {
            Files.createDirectories(dir);
            TlsMaterial m = new TlsMaterial(dir, serverExpired);
            m.keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=warden-testkit-ca",
                    "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12");
            m.caFiles();
            // Each keytool call is a JVM start (most of the cost): the two chains are made side by side, and
            // every step that needs no signing (PEM export, trust and key store entries) runs in this JVM.
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> m.signed("server", "CN=127.0.0.1",
                    "san=ip:127.0.0.1,dns:localhost"));
            // No CN: etcd's JSON gateway refuses a client certificate with a common name once authentication is on.
            m.signed("client", "O=warden-testkit-client", null);
            server.join();
            return m;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot generate TLS material in " + dir, e);
        }
    }

    /** The CA certificate, PEM ({@code tls-ca-cert-file}). */
    public Path caCertificate() {
        return dir.resolve("ca.pem");
    }

    /** A PKCS12 trust store holding only the CA. */
    public Path trustStore() {
        return dir.resolve("truststore.p12");
    }

    /** The server's certificate chain, PEM ({@code tls-cert-file}). */
    public Path serverCertificate() {
        return dir.resolve("server.pem");
    }

    /** The server's private key, unencrypted PKCS#8 PEM ({@code tls-key-file}). */
    public Path serverKey() {
        return dir.resolve("server.key");
    }

    /** A PKCS12 key store with the server's key and certificate chain (for Java servers: ZooKeeper). */
    public Path serverKeyStore() {
        return dir.resolve("server.p12");
    }

    /** A PKCS12 key store with the client's key and certificate chain, for mutual TLS. */
    public Path clientKeyStore() {
        return dir.resolve("client.p12");
    }

    /** ca.pem and a trust store holding only the CA, from ca.p12, without further keytool runs. */
    private void caFiles() throws IOException {
        try {
            X509Certificate ca = caCert();
            Files.writeString(caCertificate(), pem("CERTIFICATE", ca.getEncoded()));
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            try (OutputStream out = Files.newOutputStream(trustStore())) {
                trust.store(out, STORE_PASSWORD.toCharArray());
            }
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot write the CA's files", e);
        }
    }

    private X509Certificate caCert() throws IOException, java.security.GeneralSecurityException {
        return (X509Certificate) load(dir.resolve("ca.p12")).getCertificate("ca");
    }

    private static KeyStore load(Path store) throws IOException, java.security.GeneralSecurityException {
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, STORE_PASSWORD.toCharArray());
            return ks;
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** A key pair signed by the CA: {@code <alias>.p12} (key, chain, and the CA as trusted), {@code .pem} (chain) and {@code .key}. */
    private void signed(String alias, String dname, String san) {
        try {
            String store = alias + ".p12";
            keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dname, "-validity", "2",
                    "-keystore", store);
            keytool("-certreq", "-alias", alias, "-keystore", store, "-file", alias + ".csr");
            boolean expired = serverExpired && alias.equals("server");
            List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", "ca.p12", "-infile", alias + ".csr",
                    "-outfile", alias + ".crt", "-rfc", "-validity", expired ? "1" : "2"));
            if (expired) {
                gencert.addAll(List.of("-startdate", "-3d"));
            }
            if (san != null) {
                gencert.addAll(List.of("-ext", san));
            }
            keytool(gencert.toArray(String[]::new));
            X509Certificate ca = caCert();
            X509Certificate cert;
            try (InputStream in = Files.newInputStream(dir.resolve(alias + ".crt"))) {
                cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            }
            KeyStore ks = load(dir.resolve(store));
            Key key = ks.getKey(alias, STORE_PASSWORD.toCharArray());
            ks.setKeyEntry(alias, key, STORE_PASSWORD.toCharArray(), new java.security.cert.Certificate[] {cert, ca});
            ks.setCertificateEntry("ca", ca);
            try (OutputStream out = Files.newOutputStream(dir.resolve(store))) {
                ks.store(out, STORE_PASSWORD.toCharArray());
            }
            Files.writeString(dir.resolve(alias + ".pem"), pem("CERTIFICATE", cert.getEncoded()) + Files.readString(caCertificate()));
            pemKey(alias);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the " + alias + " certificate in " + dir, e);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot make the " + alias + " certificate in " + dir, e);
        }
    }

    private void pemKey(String alias) throws IOException {
        try (InputStream in = Files.newInputStream(dir.resolve(alias + ".p12"))) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, STORE_PASSWORD.toCharArray());
            Key key = ks.getKey(alias, STORE_PASSWORD.toCharArray());
            String pem = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            Files.writeString(dir.resolve(alias + ".key"), pem);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the key of " + alias, e);
        }
    }

    private void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", STORE_PASSWORD));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        try {
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("keytool " + String.join(" ", args) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IllegalStateException("interrupted while running keytool", e);
        }
    }
}
