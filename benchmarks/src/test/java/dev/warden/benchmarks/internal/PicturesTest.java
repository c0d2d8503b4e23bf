package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Pictures;
import dev.warden.benchmarks.Result;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

/** The pictures are drawn from a results file alone: reading it, grouping its rows, the ratios, the PNGs. */
class PicturesTest {

    @TempDir
    Path dir;

    private static Path fixture() throws URISyntaxException {
        return Path.of(Objects.requireNonNull(PicturesTest.class.getResource("/pictures-fixture.jsonl")).toURI());
    }

    @Test
    @DisplayName("a results file gives its header and its results; the ledger's rows and unmeasured figures are skipped")
    void readsTheFile() throws Exception {
        ResultsFile file = ResultsFile.read(fixture());

        assertThat(file.header()).contains(new RunHeader("2026-12-01T09:30Z", "2 CPUs (test), 4 GiB, Test OS, Java 17"));
        assertThat(file.results()).hasSize(15).noneMatch(r -> r.scenario().startsWith("ledger"));
        Result limit = file.results().get(13);
        assertThat(limit.implementation()).startsWith("redis-benchmark");
        assertThat(limit.latencyP50Micros()).isEqualTo(1263.0);
        assertThat(limit.latencyP99Micros()).isNaN(); // written NaN by older runs
        assertThat(limit.latencyP999Micros()).isNaN(); // written null
        assertThat(limit.clientCpuMicros()).isNaN();
        assertThat(file.results().get(11).note()).isEqualTo("a \"quoted\" note\\with a backslash");
    }

    @Test
    @DisplayName("a result written and read back keeps its figures, an unmeasured one as null rather than NaN")
    void resultRoundTrip() {
        Result r = new Result("s", "warden x", 16, 100, 10, 10.0, 1.5, Double.NaN, 3.5, 4.5, 0, Double.NaN, 2.25, "n \"q\"");

        String json = r.toJson();

        assertThat(json).contains("\"p99us\":null").doesNotContain("NaN");
        assertThat(Result.fromJson(json)).isEqualTo(r);
    }

    @Test
    @DisplayName("rows group by scenario and threads; Warden's best over the best peer, limits no peer")
    void groupsAndRatios() throws Exception {
        List<ScenarioGroup> groups = ScenarioGroup.of(ResultsFile.read(fixture()).results());

        assertThat(groups).extracting(ScenarioGroup::label).containsExactly(
                "lock, contended (one name), 1 thread",
                "lock, contended (one name), 16 threads",
                "lock, contended (one name), 64 threads",
                "lock, uncontended (a name per thread), 16 threads",
                "quota deduct, one hot account, 16 threads",
                "read-write, one name, 1 writer in 8 threads, 16 threads");
        assertThat(groups).extracting(g -> g.ratioText().orElse("none")).containsExactly(
                "0.91× best peer", // 5,000 / 5,500: a peer ahead shows as less than 1
                "2.00× best peer", // 12,000 / 6,000
                "1.69× best peer", // warden redis 11,000 over redisson 6,500, not jetcd or warden etcd
                "2.40× best peer", // 36,000 / 15,000: the bare scripts' 37,000 is a limit, no peer
                "10× best peer", // 50,000 / 5,000; redis-benchmark's 200,000 a limit
                "none"); // Warden alone
        assertThat(groups.get(2).wardenOverBestPeer().getAsDouble()).isCloseTo(11000.0 / 6500, within(1e-9));
        assertThat(ThroughputChart.categoryLabel(groups.get(1))).isEqualTo("16 threads\nWarden 2.00× best peer");
        assertThat(ThroughputChart.categoryLabel(groups.get(5))).isEqualTo("16 threads");
    }

    @Test
    @DisplayName("contended: threads sharing one name, two or more of them")
    void contendedGroups() throws Exception {
        List<ScenarioGroup> groups = ScenarioGroup.of(ResultsFile.read(fixture()).results());

        assertThat(groups).filteredOn(ScenarioGroup::contended).extracting(ScenarioGroup::label).containsExactly(
                "lock, contended (one name), 16 threads",
                "lock, contended (one name), 64 threads",
                "read-write, one name, 1 writer in 8 threads, 16 threads");
    }

    @Test
    @DisplayName("a run's header names the minute it started and this machine, and reads back")
    void runHeader() {
        RunHeader header = RunHeader.of(Instant.parse("2026-12-03T11:52:19Z"));

        assertThat(header.date()).isEqualTo("2026-12-03T11:52Z");
        assertThat(header.machine()).contains(Runtime.getRuntime().availableProcessors() + " CPUs");
        assertThat(RunHeader.from(JsonLine.parse(header.toJson()))).contains(header);
        assertThat(RunHeader.from(JsonLine.parse("{\"scenario\":\"ledger, sustained\",\"threads\":16}"))).isEmpty();
    }

    @Test
    @DisplayName("roles come from the implementation's name")
    void roles() {
        assertThat(Role.of("warden redis→etcd migrating")).isEqualTo(Role.WARDEN);
        assertThat(Role.of("redisson RLock")).isEqualTo(Role.PEER);
        assertThat(Role.of("seed: WATCH/MULTI optimistic")).isEqualTo(Role.PEER);
        assertThat(Role.of("limit: the 2 scripts bare (lettuce)")).isEqualTo(Role.LIMIT);
        assertThat(Role.of("redis-cli --pipe EVALSHA (write path, 1 connection)")).isEqualTo(Role.LIMIT);
    }

    @Test
    @DisplayName("the file draws a throughput and a latency PNG named after it")
    void drawsPictures() throws Exception {
        Path jsonl = dir.resolve("run.jsonl");
        Files.copy(fixture(), jsonl);

        List<Path> written = Pictures.draw(jsonl, dir.resolve("out"));

        assertThat(written).containsExactly(dir.resolve("out/run.throughput.png"), dir.resolve("out/run.latency.png"));
        // Throughput: a chart per scenario (four here), stacked; latency: one per contended scenario (two).
        assertSanePng(written.get(0), 4 * 400);
        assertSanePng(written.get(1), 2 * 460);
    }

    @Test
    @DisplayName("without contended rows there is no latency picture, and one left from an earlier run goes")
    void noContendedRows() throws Exception {
        Path jsonl = dir.resolve("results.jsonl");
        List<String> uncontended = Files.readAllLines(fixture()).stream()
                .filter(l -> l.contains("uncontended")).toList();
        Files.write(jsonl, uncontended);
        Files.writeString(dir.resolve("results.latency.png"), "stale");

        List<Path> written = Pictures.draw(jsonl, dir);

        assertThat(written).containsExactly(dir.resolve("results.throughput.png"));
        assertThat(dir.resolve("results.latency.png")).doesNotExist();
        assertSanePng(written.get(0), 400);
    }

    @Test
    @DisplayName("a line that is not JSON fails with the file and line; a file with no results fails")
    void badFiles() throws IOException {
        Path broken = dir.resolve("broken.jsonl");
        Files.write(broken, List.of("{\"date\":\"x\"}", "{\"scenario\":\"s\",\"implementation\":"));
        assertThatThrownBy(() -> ResultsFile.read(broken)).hasMessageContaining("broken.jsonl:2");

        Path empty = dir.resolve("empty.jsonl");
        Files.write(empty, List.of("{\"date\":\"x\"}"));
        assertThatThrownBy(() -> Pictures.draw(empty, dir)).hasMessageContaining("no results");
    }

    @Test
    @DisplayName("a line's strings, numbers, null, NaN and escapes")
    void jsonLine() {
        Map<String, Object> fields = JsonLine.parse(" { \"a\" : \"x\\u00e9\\n\" , \"b\": -1.5e3, \"c\": null, \"d\": NaN, \"e\": true } ");

        assertThat(fields).containsExactly(entry("a", "xé\n"), entry("b", -1500.0), entry("c", null),
                entry("d", Double.NaN), entry("e", true));
        assertThatThrownBy(() -> JsonLine.parse("{\"a\": 1} trailing")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JsonLine.parse("{\"a\": [1]}")).isInstanceOf(IllegalArgumentException.class);
    }

    private static void assertSanePng(Path png, int chartsHeight) throws IOException {
        assertThat(Files.size(png)).as("bytes of %s", png).isGreaterThan(20_000).isLessThan(5_000_000);
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).as("%s is a PNG", png).isNotNull();
        assertThat(image.getWidth()).isEqualTo(1400);
        assertThat(image.getHeight()).isGreaterThan(chartsHeight).isLessThan(chartsHeight + 200);
    }
}
