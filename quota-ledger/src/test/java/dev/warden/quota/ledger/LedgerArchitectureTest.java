package dev.warden.quota.ledger;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
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
    @DisplayName("by concept, one floor each: the entry points on top, the vocabulary at the bottom, the store under the consumer")
    void floors() {
        String top = "dev.warden.quota.ledger";
        noClasses().that().resideOutsideOfPackage(top)
                .should().dependOnClassesThat().resideInAPackage(top)
                .because("only the three entry points live in the top package, and nothing below calls up into them")
                .check(main);
        noClasses().that().resideInAnyPackage(top + ".journal", top + ".consume", top + ".reconcile", top + ".store")
                .should().dependOnClassesThat().resideInAPackage(top + ".internal..")
                .because("the public vocabulary names no machinery")
                .check(main);
        noClasses().that().resideInAPackage(top + ".internal.store")
                .should().dependOnClassesThat().resideInAnyPackage(top + ".internal.consume", top + ".internal.reconcile")
                .because("the store writes plain records and decides nothing")
                .check(main);
        noClasses().that().resideInAPackage(top + ".internal.journal")
                .should().dependOnClassesThat().resideInAnyPackage(top + ".internal.store", top + ".internal.consume",
                        top + ".internal.reconcile")
                .because("the journal streams know neither the database nor the consumer")
                .check(main);
        noClasses().that().resideInAPackage(top + ".internal.consume")
                .should().dependOnClassesThat().resideInAPackage(top + ".internal.reconcile")
                .check(main);
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
