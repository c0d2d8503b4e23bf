package dev.warden.lock.tck;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * docs/ARCHITECTURE.md's dependency rules for one backend, checked by ArchUnit rather than by review: a
 * backend uses nothing of Warden's but its own packages and lock-api's public ones (so it knows no other backend), uses lock-api only through its public API and SPI, keeps all but
 * its provider in {@code internal}, and has no package cycles. Its tests follow the one suffix
 * Surefire runs.
 */
public abstract class BackendArchitecture {

    /** The backend's name, which is also its package: {@code dev.warden.lock.<backend>}. */
    protected abstract String backend();

    /**
     * Packages of Warden's beyond lock-api's public ones that the backend may use, as ArchUnit package
     * patterns: a foundation shared with another part of Warden (the Redis backend's {@code dev.warden.redis..},
     * which the quota engine uses too). None by default: a backend written from the SPI alone uses nothing else.
     */
    protected List<String> sharedFoundations() {
        return List.of();
    }

    private String root() {
        return "dev.warden.lock." + backend();
    }

    /** The backend's main classes by root package: imported once per JVM, not once per rule (each import took 1-4 s). */
    private static final Map<String, JavaClasses> MAIN = new ConcurrentHashMap<>();

    private JavaClasses main() {
        return MAIN.computeIfAbsent(root(), root -> new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(root));
    }

    private JavaClasses tests() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS).importPackages(root());
    }

    /** Of Warden, only itself, lock-api's public packages (API, SPI, settings) and its declared foundations. */
    @Test
    void usesOfWardenOnlyLockApiAndItself() {
        List<String> allowed = new ArrayList<>(List.of(root() + "..", "dev.warden.lock", "dev.warden.lock.spi",
                "dev.warden.lock.settings"));
        allowed.addAll(sharedFoundations());
        noClasses().should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.warden..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage(allowed.toArray(String[]::new)))))
                .check(main());
    }

    @Test
    void usesLockApiOnlyThroughItsApiAndSpi() {
        noClasses().should().dependOnClassesThat().resideInAPackage("dev.warden.lock.internal..").check(main());
    }

    @Test
    void onlyTheProviderLivesOutsideInternal() {
        classes().that().resideInAPackage(root()).and().areTopLevelClasses()
                .and().doNotHaveSimpleName("package-info")
                .should().implement(dev.warden.lock.spi.LockProvider.class)
                .check(main());
    }

    @Test
    void freeOfPackageCycles() {
        slices().matching(root() + ".(**)").should().beFreeOfCycles().check(main());
    }

    @Test
    void testClassesEndInTest() {
        classes().that().areTopLevelClasses().and().containAnyMethodsThat(
                        com.tngtech.archunit.base.DescribedPredicate.describe("are tests",
                                m -> m.isAnnotatedWith(Test.class)))
                .should().haveSimpleNameEndingWith("Test")
                .allowEmptyShould(true)
                .check(tests());
    }
}
