package dev.warden.spring;

import org.springframework.boot.test.context.FilteredClassLoader;

import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * A class loader for {@code ApplicationContextRunner.withClassLoader} that behaves as if Warden modules
 * were not on the class path: {@link FilteredClassLoader} hides their marker classes (what
 * {@code @ConditionalOnClass} sees), and its parent hides their {@code META-INF/services} files (what
 * Warden's {@code ServiceLoader} sees), so a hidden backend is absent, not broken.
 */
final class WithoutModules {

    private WithoutModules() {
    }

    /**
     * @param modules artifact ids, e.g. {@code lock-redis}
     * @param markers the classes the conditions look for in those modules
     */
    static ClassLoader of(List<String> modules, Class<?>... markers) {
        return new FilteredClassLoader(new HidingServiceFiles(WithoutModules.class.getClassLoader(), modules), markers);
    }

    private static final class HidingServiceFiles extends ClassLoader {

        private final List<String> modules;

        HidingServiceFiles(ClassLoader parent, List<String> modules) {
            super(parent);
            this.modules = modules;
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            if (!name.startsWith("META-INF/services/")) {
                return super.getResources(name);
            }
            // A module's files come from its jar (.../lock-redis/0.1.0/lock-redis-0.1.0.jar) or, in the
            // reactor, from its classes folder (.../lock-redis/target/classes/).
            List<URL> kept = Collections.list(super.getResources(name)).stream()
                    .filter(url -> modules.stream().noneMatch(m -> url.toString().contains("/" + m + "/")))
                    .toList();
            return Collections.enumeration(kept);
        }
    }
}
