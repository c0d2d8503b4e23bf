package dev.warden.reactor;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** docs/ARCHITECTURE.md's rules for warden-reactor, checked by ArchUnit. */
class ReactorArchitectureTest {

    private static final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.warden.reactor");

    @Test
    @DisplayName("Warden only through its public APIs: no internals of other modules, no SPI, no backend, no testkit")
    void publicApisOnly() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden.lock.internal..", "dev.warden.quota.internal..",
                        "dev.warden.lock.spi..", "dev.warden.quota.redis..", "dev.warden.quota.shared..", "dev.warden.redis..",
                        "dev.warden.lock.redis..", "dev.warden.lock.etcd..", "dev.warden.lock.zookeeper..",
                        "dev.warden.lock.memory..", "dev.warden.testkit..")
                .check(main);
    }

    @Test
    @DisplayName("quota-core is optional: only ReactiveQuota touches it, so the locks work without it")
    void quotaOnlyInReactiveQuota() {
        noClasses().that().doNotHaveFullyQualifiedName(ReactiveQuota.class.getName())
                .should().dependOnClassesThat().resideInAnyPackage("dev.warden.quota..")
                .check(main);
    }

    @Test
    @DisplayName("no blocking on a lock: the lock side never calls acquire(), tryAcquire() or release() of lock-api")
    void lockSideNeverBlocks() {
        noClasses().should().callMethod(dev.warden.lock.DistributedLock.class, "acquire")
                .orShould().callMethod(dev.warden.lock.DistributedLock.class, "tryAcquire", java.time.Duration.class)
                .orShould().callMethod(dev.warden.lock.Lease.class, "release")
                .orShould().callMethod(dev.warden.lock.Lease.class, "close")
                .check(main);
    }

    @Test
    @DisplayName("no package cycles")
    void noCycles() {
        slices().matching("dev.warden.reactor.(**)").should().beFreeOfCycles().check(main);
    }
}
