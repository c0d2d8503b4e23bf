package dev.warden.micrometer;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** docs/ARCHITECTURE.md's rules for warden-micrometer, checked by ArchUnit. */
class MicrometerArchitectureTest {

    private static final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.warden.micrometer");

    @Test
    @DisplayName("Warden only through its public APIs: no internals, no SPI, no backend, no testkit")
    void publicApisOnly() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden..internal..", "dev.warden.lock.spi..",
                        "dev.warden.quota.redis..", "dev.warden.lock.redis..", "dev.warden.lock.etcd..",
                        "dev.warden.lock.zookeeper..", "dev.warden.testkit..")
                .check(main);
    }
}
