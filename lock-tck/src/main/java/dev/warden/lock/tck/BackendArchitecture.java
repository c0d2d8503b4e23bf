package dev.warden.lock.tck;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.List;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * docs/ARCHITECTURE.md's dependency rules for one backend, checked by ArchUnit rather than by review: a
 * backend knows no other backend, uses lock-api only through its public API and SPI, keeps all but
 * its provider in {@code internal}, and has no package cycles. Its tests follow the one suffix
 * Surefire runs.
 */
public abstract class BackendArchitecture {

    private static final List<String> BACKENDS = List.of("redis", "etcd", "zookeeper", "memory", "jdbc");

    /** The backend's name, which is also its package: {@code dev.warden.lock.<backend>}. */
    protected abstract String backend();

    private String root() {
        return "dev.warden.lock." + backend();
    }

    private JavaClasses main() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(root());
    }

    private JavaClasses tests() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS).importPackages(root());
    }

    @Test
    void knowsNoOtherBackend() {
        String[] others = BACKENDS.stream().filter(b -> !b.equals(backend())).map(b -> "dev.warden.lock." + b + "..")
                .toArray(String[]::new);
        noClasses().should().dependOnClassesThat().resideInAnyPackage(others).check(main());
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
