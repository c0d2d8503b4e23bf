package dev.warden.lock;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

class ArchitectureTest {

    private final JavaClasses api = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.warden.lock");

    @Test
    @DisplayName("lock-api knows no backend and no server client library")
    void knowsNoBackend() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden.lock.redis..",
                        "dev.warden.lock.etcd..", "dev.warden.lock.zookeeper..", "io.lettuce..", "io.etcd..",
                        "org.apache.curator..", "org.apache.zookeeper..", "io.netty..", "io.grpc..")
                .check(api);
    }

    @Test
    @DisplayName("the SPI does not reach into the implementation")
    void spiStandsAlone() {
        noClasses().that().resideInAPackage("dev.warden.lock.spi..")
                .should().dependOnClassesThat().resideInAPackage("dev.warden.lock.internal..")
                .check(api);
    }

    @Test
    @DisplayName("no package cycles, internal sub-packages included")
    void noCycles() {
        slices().matching("dev.warden.lock.(**)").should().beFreeOfCycles().check(api);
    }

    @Test
    @DisplayName("time is read and timers armed only through the Timekeeper (Await measures its real-time limits itself)")
    void oneClock() {
        noClasses().that().resideOutsideOfPackage("dev.warden.lock.internal.time..")
                .and().doNotHaveFullyQualifiedName("dev.warden.lock.internal.Await")
                .should().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(java.time.Instant.class, "now")
                .orShould().dependOnClassesThat().areAssignableTo(java.util.concurrent.ScheduledExecutorService.class)
                .check(api);
    }
}
