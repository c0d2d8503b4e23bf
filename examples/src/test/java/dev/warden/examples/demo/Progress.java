package dev.warden.examples.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The live line while the demo runs: a bar of elapsed/duration, charges so far and the rate over
 * the last second. On a terminal one line is redrawn with {@code \r}; elsewhere (a pipe, a CI log)
 * a plain line is printed every second.
 */
final class Progress implements AutoCloseable {

    /** How the progress is shown. */
    enum Mode {
        /** {@code BAR} on a terminal, {@code LINES} otherwise. */
        AUTO,
        BAR,
        LINES,
        OFF
    }

    private static final int WIDTH = 30;

    private final PrintStream out;
    private final Mode mode;
    private final Duration duration;
    private final LongSupplier charges;
    private final long started = System.nanoTime();
    private final Deque<long[]> samples = new ArrayDeque<>();
    private final ScheduledExecutorService timer;
    private int lastWidth;
    private boolean closed;
    private long lastDrawn;
    private boolean drawn;

    Progress(PrintStream out, Mode mode, Duration duration, LongSupplier charges) {
        this.out = out;
        this.mode = mode == Mode.AUTO ? (out == System.out && System.console() != null ? Mode.BAR : Mode.LINES) : mode;
        this.duration = duration;
        this.charges = charges;
        samples.addLast(new long[] {started, charges.getAsLong()});
        if (this.mode == Mode.OFF) {
            timer = null;
            return;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "billing-demo-progress");
            t.setDaemon(true);
            return t;
        });
        long period = this.mode == Mode.BAR ? 200 : 1000;
        timer.scheduleAtFixedRate(this::tick, period, period, TimeUnit.MILLISECONDS);
    }

    private synchronized void tick() {
        if (!closed) {
            draw();
        }
    }

    private void draw() {
        long now = System.nanoTime();
        lastDrawn = now;
        drawn = true;
        long count = charges.getAsLong();
        samples.addLast(new long[] {now, count});
        while (samples.size() > 2 && now - samples.peekFirst()[0] > 1_000_000_000L) {
            samples.removeFirst();
        }
        long[] first = samples.peekFirst();
        double rate = now > first[0] ? (count - first[1]) * 1e9 / (now - first[0]) : 0;
        double elapsed = Math.min((now - started) / 1e9, duration.toMillis() / 1000.0);
        double fraction = duration.isZero() ? 1 : Math.min(1, elapsed * 1000 / duration.toMillis());
        String line = String.format(Locale.ROOT, "  %s %5.1f/%.1f s  %,10d charges  %,8.0f/s", bar(fraction), elapsed,
                duration.toMillis() / 1000.0, count, rate);
        if (mode == Mode.BAR) {
            String padded = line.length() < lastWidth ? line + " ".repeat(lastWidth - line.length()) : line;
            lastWidth = line.length();
            out.print("\r" + padded);
        } else {
            out.println(line);
        }
        out.flush();
    }

    private static String bar(double fraction) {
        int full = (int) Math.round(fraction * WIDTH);
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < WIDTH; i++) {
            b.append(i < full ? '=' : i == full ? '>' : ' ');
        }
        return b.append(']').toString();
    }

    /** Stops the timer; on a terminal, draws the last state and ends the line. */
    @Override
    public synchronized void close() {
        if (timer == null || closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        if (mode == Mode.BAR) {
            draw();
            out.println();
        } else if (!drawn || System.nanoTime() - lastDrawn > 500_000_000L) {
            draw();
        }
    }
}
