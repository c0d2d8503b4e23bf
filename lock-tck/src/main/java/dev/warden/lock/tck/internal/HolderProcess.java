package dev.warden.lock.tck.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A holder in its own JVM, so a test can kill it (SIGKILL) or freeze it (SIGSTOP) the way a real
 * process dies: its connection and its renewals go with it. Arguments: the lock name, then
 * {@code key=value} settings. Prints {@code GRANTED <token>} once it holds the lock, then waits.
 */
public final class HolderProcess {

    private HolderProcess() {
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        LockClient client = LockClient.create(settings);
        Lease lease = client.lock(args[0]).acquire();
        System.out.println("GRANTED " + lease.fencingToken());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
