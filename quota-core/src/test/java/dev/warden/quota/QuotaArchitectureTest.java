package dev.warden.quota;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/** docs/ARCHITECTURE.md's rules for quota-core, checked by ArchUnit rather than by review. */
class QuotaArchitectureTest {

    private static final JavaClasses main = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.warden.quota");
    private static final JavaClasses tests = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS).importPackages("dev.warden.quota");

    @Test
    @DisplayName("quota-core reaches locks only through lock-api's public API: no backend, no SPI, no internals")
    void locksOnlyThroughLockApi() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.warden.lock.redis..", "dev.warden.lock.etcd..",
                        "dev.warden.lock.zookeeper..", "dev.warden.lock.internal..", "dev.warden.lock.spi..",
                        "dev.warden.testkit..", "io.etcd..", "org.apache.curator..", "org.apache.zookeeper..")
                .check(main);
    }

    @Test
    @DisplayName("the public API uses internal only in QuotaService's factory methods")
    void publicApiKeepsInternalOut() {
        classes().that().resideInAPackage("dev.warden.quota").and().doNotHaveFullyQualifiedName(QuotaService.class.getName())
                .should().onlyDependOnClassesThat(DescribedPredicate.not(
                        com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage("dev.warden.quota.internal..")))
                .check(main);
        classes().that().haveFullyQualifiedName(QuotaService.class.getName())
                .should().onlyDependOnClassesThat(DescribedPredicate.not(
                        com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage("dev.warden.quota.internal..")
                                .and(DescribedPredicate.not(com.tngtech.archunit.core.domain.JavaClass.Predicates
                                        .simpleName("QuotaFactory")))))
                .check(main);
    }

    @Test
    @DisplayName("no public signature of the API names an internal, Lettuce or Netty type")
    void signaturesAreClean() {
        List<String> leaks = new ArrayList<>();
        for (JavaClass c : main) {
            if (!c.getPackageName().equals("dev.warden.quota") || !c.getModifiers().contains(JavaModifier.PUBLIC)) {
                continue;
            }
            for (JavaMethod m : c.getMethods()) {
                if (!m.getModifiers().contains(JavaModifier.PUBLIC)) {
                    continue;
                }
                List<JavaClass> types = new ArrayList<>(m.getRawParameterTypes());
                types.add(m.getRawReturnType());
                for (JavaClass t : types) {
                    String name = t.getName();
                    if (name.startsWith("dev.warden.quota.internal") || name.startsWith("io.lettuce") || name.startsWith("io.netty")) {
                        leaks.add(m.getFullName() + " -> " + name);
                    }
                }
            }
        }
        assertThat(leaks).isEmpty();
    }

    @Test
    @DisplayName("no package cycles below the API (the API's one edge into internal, the factory, is pinned above)")
    void freeOfCycles() {
        slices().matching("dev.warden.quota.(**)").should().beFreeOfCycles().allowEmptyShould(true).check(main);
    }

    @Test
    @DisplayName("test classes end in Test, the one suffix Surefire runs")
    void testClassesEndInTest() {
        classes().that().areTopLevelClasses().and().containAnyMethodsThat(DescribedPredicate.describe("are tests",
                        m -> m.isAnnotatedWith(Test.class) || m.isAnnotatedWith(org.junit.jupiter.params.ParameterizedTest.class)))
                .should().haveSimpleNameEndingWith("Test")
                .check(tests);
    }
}
