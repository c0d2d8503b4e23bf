package dev.warden.lock.tck.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM the kit starts (a holder to kill or freeze, a worker of a history run):
 * the test's own java and class path, with the client compiler only and the serial collector. A child lives
 * seconds and starts often (a few per kit class); C2 and parallel GC threads cost a fresh JVM CPU the test's
 * own timing clauses compete for on a small host, and got it to its first grant about a fifth later here.
 */
final class ChildJvm {

    private ChildJvm() {
    }

    static List<String> command(Class<?> main, String... jvmOptions) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.addAll(List.of(jvmOptions));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        return command;
    }
}
