package dev.warden.spring;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** docs/ARCHITECTURE.md's rules for the starter, checked by ArchUnit. */
class StarterArchitectureTest {

    private static final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.warden.spring");

    @Test
    @DisplayName("Warden only through its public APIs: no other module's internals, no SPI, no backend (named by string only)")
    void publicApisOnly() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden.lock.internal..",
                        "dev.warden.quota.internal..", "dev.warden.quota.ledger.internal..", "dev.warden.lock.spi..",
                        "dev.warden.quota.redis..", "dev.warden.lock.redis..", "dev.warden.lock.etcd..",
                        "dev.warden.lock.zookeeper..", "dev.warden.testkit..")
                .check(main);
    }

    @Test
    @DisplayName("the public API (dev.warden.spring) names nothing of the starter's internal package")
    void apiKeepsInternalOut() {
        noClasses().that().resideInAPackage("dev.warden.spring").should().dependOnClassesThat()
                .resideInAPackage("dev.warden.spring.internal..").check(main);
    }

    @Test
    @DisplayName("no package cycles")
    void noCycles() {
        slices().matching("dev.warden.(**)").should().beFreeOfCycles().check(main);
    }
}
