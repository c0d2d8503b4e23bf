package dev.warden.lock.zookeeper.internal;

import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

class PathsTest {

    @Test
    @DisplayName("lock names become one valid path element each, readable where ZooKeeper allows it")
    void encodesNamesAsOnePathElement() {
        assertThat(Paths.lockPath("billing", "merchant:42")).isEqualTo("/billing/merchant:42");
        assertThat(Paths.encode("订单:{42}/a b*?[]")).isEqualTo("订单:{42}%2Fa b*?[]");
        assertThat(Paths.encode("100%")).isEqualTo("100%25");
        assertThat(Paths.encode(".")).isEqualTo("%2E");
        assertThat(Paths.encode("..")).isEqualTo("%2E%2E");
        assertThat(Paths.encode("...")).isEqualTo("...");
        assertThat(Paths.encode("emoji-😀")).isEqualTo("emoji-%F0%9F%98%80");
        assertThat(Paths.encode("private-\uE000")).isEqualTo("private-%EE%80%80");
        assertThat(Paths.encode("del\u007F")).isEqualTo("del%7F");
        for (String name : List.of("a/b", "%2F", "é锁", "😀", "\uFFF5", "..", "x".repeat(256), "\u0085")) {
            String path = Paths.lockPath("ns", name);
            assertThatCode(() -> PathUtils.validatePath(path)).as(name).doesNotThrowAnyException();
            assertThat(path.chars().filter(c -> c == '/').count()).as(name).isEqualTo(2);
        }
    }

    @Test
    @DisplayName("encoding is injective: distinct names never share a node")
    void injective() {
        assertThat(Paths.encode("a/b")).isNotEqualTo(Paths.encode("a%2Fb"));
        assertThat(Paths.encode("%2E")).isNotEqualTo(Paths.encode("."));
    }

    @Test
    @DisplayName("the queue is ordered by the sequence suffix, whatever the protection prefix")
    void queueOrder() {
        List<String> children = List.of(
                "_c_bbbb-lock-0000000012",
                "_c_aaaa-lock-0000000003",
                "stray",
                "_c_cccc-lock-0000000100");
        assertThat(Paths.queue(children)).containsExactly(
                "_c_aaaa-lock-0000000003", "_c_bbbb-lock-0000000012", "_c_cccc-lock-0000000100");
        assertThat(Paths.sequence("lock-")).isEmpty();
    }

    @Test
    @DisplayName("namespaces ZooKeeper cannot take are refused")
    void namespaces() {
        assertThat(Paths.namespaceProblems("billing")).isEmpty();
        assertThat(Paths.namespaceProblems(".")).hasSize(1);
        assertThat(Paths.namespaceProblems("zookeeper")).hasSize(1);
    }
}
