package dev.warden.quota.ledger;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** docs/ARCHITECTURE.md's rules for quota-ledger, checked by ArchUnit rather than by review. */
class LedgerArchitectureTest {

    private static final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.warden.quota.ledger");
    private static final JavaClasses tests = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS).importPackages("dev.warden.quota.ledger");

    @Test
    @DisplayName("the ledger reaches the engine through its API and SPI only, and locks through lock-api's public API only")
    void onlyPublicSurfaces() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden.quota.internal..",
                        "dev.warden.lock.internal..", "dev.warden.lock.spi..", "dev.warden.lock.redis..",
                        "dev.warden.lock.etcd..", "dev.warden.lock.zookeeper..", "dev.warden.testkit..")
                .check(main);
    }

    @Test
    @DisplayName("the stream protocol has one home: only JournalStreams names Lettuce's stream commands")
    void streamProtocolInOneClass() {
        noClasses().that().doNotHaveSimpleName("JournalStreams")
                .should().dependOnClassesThat().haveFullyQualifiedName("io.lettuce.core.XReadArgs")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("io.lettuce.core.XAutoClaimArgs")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("io.lettuce.core.XGroupCreateArgs")
                .check(main);
    }

    @Test
    @DisplayName("no package cycles")
    void freeOfCycles() {
        slices().matching("dev.warden.quota.ledger.(**)").should().beFreeOfCycles().allowEmptyShould(true).check(main);
    }

    @Test
    @DisplayName("test classes end in Test, the one suffix Surefire runs")
    void testClassesEndInTest() {
        classes().that().areTopLevelClasses().and().containAnyMethodsThat(DescribedPredicate.describe("are tests",
                        m -> m.isAnnotatedWith(Test.class) || m.isAnnotatedWith(org.junit.jupiter.params.ParameterizedTest.class)
                                || m.isAnnotatedWith(net.jqwik.api.Property.class) || m.isAnnotatedWith(net.jqwik.api.Example.class)))
                .should().haveSimpleNameEndingWith("Test")
                .check(tests);
    }
}
