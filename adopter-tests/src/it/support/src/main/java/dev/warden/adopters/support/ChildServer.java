package dev.warden.adopters.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** A server running as a child process, in a temporary directory removed on close. */
abstract class ChildServer implements AutoCloseable {

    private final Process process;
    private final Path dir;
    private final Path log;

    ChildServer(List<String> command, Path dir) {
        this.dir = dir;
        this.log = dir.resolve("server.log");
        try {
            this.process = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            Binaries.delete(dir);
            throw new UncheckedIOException("cannot start " + command.get(0), e);
        }
    }

    /** Waits until {@code ready} holds, polling until the deadline; a dead or silent server fails with its log. */
    final void awaitReady(String what, Duration timeout, BooleanSupplier ready) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ready.getAsBoolean()) {
            if (!process.isAlive()) {
                String tail = Binaries.tail(log);
                close();
                throw new Binaries.ServerExited(what + " exited with " + process.exitValue() + ":\n" + tail);
            }
            if (System.nanoTime() - deadline > 0) {
                String tail = Binaries.tail(log);
                close();
                throw new IllegalStateException(what + " did not answer within " + timeout + ":\n" + tail);
            }
            try {
                process.waitFor(20, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new IllegalStateException("interrupted while starting " + what, e);
            }
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        Binaries.delete(dir);
    }
}
