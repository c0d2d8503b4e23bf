package dev.warden.examples.demo.support;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Keeps the examples' terminal readable: SLF4J goes to slf4j-simple at warn level
 * ({@code simplelogger.properties}); this does the same for {@code java.util.logging}, which gRPC
 * (under jetcd) writes to. A {@code java.util.logging.config.file} given on the command line wins.
 */
public final class QuietLogging {

    private QuietLogging() {
    }

    public static void apply() {
        if (System.getProperty("java.util.logging.config.file") != null
                || System.getProperty("java.util.logging.config.class") != null) {
            return;
        }
        Logger root = Logger.getLogger("");
        root.setLevel(Level.WARNING);
        for (Handler h : root.getHandlers()) {
            h.setLevel(Level.WARNING);
        }
    }
}
