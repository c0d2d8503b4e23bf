package dev.warden.examples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** A {@link PrintStream} whose text a test can read back; also echoed to the test's own output. */
public final class Captured {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    public final PrintStream stream = new PrintStream(new java.io.OutputStream() {
        @Override
        public synchronized void write(int b) {
            bytes.write(b);
            System.out.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            bytes.write(b, off, len);
            System.out.write(b, off, len);
        }
    }, true, StandardCharsets.UTF_8);

    public String text() {
        synchronized (stream) {
            stream.flush();
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return text();
    }
}
