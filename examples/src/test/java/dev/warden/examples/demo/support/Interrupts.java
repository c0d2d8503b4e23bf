package dev.warden.examples.demo.support;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;

/**
 * Ctrl-C for the examples: a short message and a quiet exit. A terminal's Ctrl-C reaches the whole
 * process group, so the embedded servers (child processes) stop at the same moment, and every
 * client library would otherwise log its lost connections while the JVM shuts down. Uses
 * {@code sun.misc.Signal} (module jdk.unsupported) reflectively; where it is missing, Ctrl-C ends
 * the JVM as usual. The shutdown hooks (closing what the example started) run either way.
 */
public final class Interrupts {

    private Interrupts() {
    }

    /**
     * On Ctrl-C: print {@code "<program>: interrupted"}, silence standard error, run {@code cleanup}
     * (at most a few seconds) and halt with exit code 130, without waiting for clients to notice that
     * their servers are gone.
     */
    public static void quitQuietly(String program, Runnable cleanup) {
        PrintStream err = System.err;
        onInterrupt(() -> {
            System.out.println();
            System.out.flush();
            err.println(program + ": interrupted");
            err.flush();
            System.setErr(new PrintStream(OutputStream.nullOutputStream()));
            Thread t = new Thread(cleanup, program + "-cleanup");
            t.setDaemon(true);
            t.start();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(130);
        });
    }

    /** Runs {@code action} on SIGINT instead of shutting down; returns whether the handler was installed. */
    public static boolean onInterrupt(Runnable action) {
        try {
            Class<?> signalType = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Object signal = signalType.getConstructor(String.class).newInstance("INT");
            Object handler = Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[] {handlerType},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            action.run();
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "Ctrl-C handler";
                    });
            signalType.getMethod("handle", signalType, handlerType).invoke(null, signal, handler);
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
