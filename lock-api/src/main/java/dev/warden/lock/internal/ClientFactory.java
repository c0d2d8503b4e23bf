package dev.warden.lock.internal;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.internal.config.Settings;
import dev.warden.lock.internal.migration.MigratingDriver;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.ServiceLoader;

/** Turns settings into a client: read and validate them all, find the one provider, connect. */
public final class ClientFactory {

    private ClientFactory() {
    }

    public static LockClient create(Properties properties) {
        if (properties == null) {
            throw new LockException(LockException.Reason.CONFIGURATION, "properties must not be null");
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        // entrySet, not stringPropertyNames: a Duration put into Properties must not vanish silently.
        properties.forEach((k, v) -> settings.put(String.valueOf(k), v));
        return create(settings);
    }

    public static LockClient create(URI uri) {
        return create(Settings.fromUri(uri));
    }

    public static LockClient create(Map<String, ?> settings) {
        return create(settings, LockObserver.NONE);
    }

    public static LockClient create(Map<String, ?> settings, LockObserver observer) {
        Objects.requireNonNull(observer, "observer");
        Settings.Resolved resolved = Settings.resolve(settings, ServiceLoader.load(LockProvider.class, classLoader()));
        LockDriver driver = resolved.leaving().isEmpty() ? resolved.provider().open(resolved.settings().lock())
                : migrating(resolved.leaving().get(), resolved);
        try {
            DefaultLockClient.refuseCachingWithout(resolved.settings(), driver);
        } catch (LockException e) {
            driver.close();
            throw e;
        }
        EpochCheck.refuseLowerEpoch(driver, resolved.settings());
        return DefaultLockClient.open(resolved.settings(), driver, new SafeObserver(observer));
    }

    /** The backend being left is opened first and closed again when the one moved to cannot be opened. */
    private static LockDriver migrating(Settings.Leaving leaving, Settings.Resolved resolved) {
        LockDriver from = leaving.provider().open(leaving.config());
        LockDriver to;
        try {
            to = resolved.provider().open(resolved.settings().lock());
        } catch (RuntimeException e) {
            from.close();
            throw e;
        }
        return MigratingDriver.of(from, leaving.config().backend(), to, resolved.settings().lock().backend(),
                resolved.settings().lock().ttl());
    }

    private static ClassLoader classLoader() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return cl != null ? cl : ClientFactory.class.getClassLoader();
    }
}
