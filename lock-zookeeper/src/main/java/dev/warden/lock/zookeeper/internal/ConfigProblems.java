package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.LockConfig;

import java.util.List;

/** What the ZooKeeper backend finds wrong in a configuration, before anything connects. Stateless. */
public final class ConfigProblems {

    private ConfigProblems() {
    }

    /** Problems with the backend's own settings. */
    public static List<String> of(LockConfig config) {
        List<String> problems = new java.util.ArrayList<>(Endpoints.problems(config.endpoints()));
        problems.addAll(Paths.namespaceProblems(config.namespace()));
        problems.addAll(Security.problems(config.options(), System::getenv));
        config.option(ZooKeeperDriver.LOST_ON).ifPresent(value -> {
            try {
                ZooKeeperSession.LostOn.parse(value);
            } catch (IllegalArgumentException e) {
                problems.add("warden.lock.zookeeper." + ZooKeeperDriver.LOST_ON + " '" + value + "' must be suspended or lost");
            }
        });
        if (config.ttl().toMillis() > Integer.MAX_VALUE) {
            problems.add("warden.lock.ttl " + config.ttl() + " is too long for a ZooKeeper session");
        }
        if (config.connectTimeout().toMillis() > Integer.MAX_VALUE || config.requestTimeout().toMillis() > Integer.MAX_VALUE) {
            problems.add("warden.lock.connect-timeout and request-timeout must be shorter than 24 days");
        }
        return problems;
    }
}
