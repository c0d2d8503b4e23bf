package dev.warden.testkit;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Everything written to {@code System.out} and {@code System.err} while a test's block runs, including
 * what slf4j-simple logs (it looks {@code System.err} up at every line), so a test can assert that a
 * secret reached no log line. Other threads' output in that time is captured too; that is fine for
 * "never appears" assertions.
 */
public final class CapturedOutput {

    /** A block that may throw. */
    @FunctionalInterface
    public interface Block {
        void run() throws Throwable;
    }

    private static final Object SWAP = new Object();

    private CapturedOutput() {
    }

    /**
     * Runs {@code block} with both streams captured (and still echoed) and returns the text; what the
     * block throws is rethrown after the streams are restored.
     */
    public static String of(Block block) {
        synchronized (SWAP) {
            PrintStream out = System.out;
            PrintStream err = System.err;
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            System.setOut(new PrintStream(new Tee(buffer, out), true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(new Tee(buffer, err), true, StandardCharsets.UTF_8));
            try {
                block.run();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            } finally {
                System.setOut(out);
                System.setErr(err);
            }
            return buffer.toString(StandardCharsets.UTF_8);
        }
    }

    /**
     * The {@code toString} (class and message) of {@code error}, of every cause and of every suppressed
     * exception, one a line: what a secret must not appear in.
     */
    public static String chain(Throwable error) {
        StringBuilder text = new StringBuilder();
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>();
        if (error != null) {
            todo.add(error);
        }
        while (!todo.isEmpty()) {
            Throwable t = todo.poll();
            if (seen.add(t)) {
                text.append(t).append('\n');
                if (t.getCause() != null) {
                    todo.add(t.getCause());
                }
                todo.addAll(java.util.List.of(t.getSuppressed()));
            }
        }
        return text.toString();
    }

    /** Writes to the buffer and to the original stream. */
    private static final class Tee extends java.io.OutputStream {
        private final ByteArrayOutputStream buffer;
        private final PrintStream original;

        Tee(ByteArrayOutputStream buffer, PrintStream original) {
            this.buffer = buffer;
            this.original = original;
        }

        @Override
        public void write(int b) {
            synchronized (buffer) {
                buffer.write(b);
            }
            original.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (buffer) {
                buffer.write(b, off, len);
            }
            original.write(b, off, len);
        }
    }
}
