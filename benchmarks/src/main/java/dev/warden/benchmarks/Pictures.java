package dev.warden.benchmarks;

import dev.warden.benchmarks.internal.LatencyChart;
import dev.warden.benchmarks.internal.ResultsFile;
import dev.warden.benchmarks.internal.ThroughputChart;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Draws the pictures of a run from its {@code results.jsonl} alone, so a kept file redraws its pictures:
 * {@code NAME.throughput.png} (grouped bars per scenario, Warden's best over the best alternative under
 * each group) and {@code NAME.latency.png} (percentiles of the contended rows), next to {@code NAME.jsonl}
 * unless told otherwise. {@link Bench} calls it after a run.
 */
@Command(name = "pictures", mixinStandardHelpOptions = true,
        description = "Draws throughput and latency pictures (PNG) from a results.jsonl.")
public final class Pictures implements Callable<Integer> {

    static {
        // No display on a build machine; set before anything touches AWT.
        System.setProperty("java.awt.headless", "true");
    }

    @Option(names = "--from", required = true, description = "the results.jsonl to draw")
    Path from;

    @Option(names = "--out", description = "directory for the pictures (default: the directory of --from)")
    Path out;

    /**
     * Runs from the command line, e.g. {@code --from docs/benchmarks.jsonl --out docs}.
     *
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        System.exit(new CommandLine(new Pictures()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        Path dir = out != null ? out : from.toAbsolutePath().getParent();
        for (Path written : draw(from, dir)) {
            System.out.println("wrote " + written);
        }
        return 0;
    }

    /**
     * Draws the pictures of {@code jsonl} into {@code dir}, named after it ({@code results.jsonl} gives
     * {@code results.throughput.png} and {@code results.latency.png}); a latency picture left from an
     * earlier run is removed when this one has no contended rows, so no picture speaks for another run.
     *
     * @return the files written
     */
    public static List<Path> draw(Path jsonl, Path dir) throws IOException {
        ResultsFile file = ResultsFile.read(jsonl);
        if (file.results().isEmpty()) {
            throw new IOException(jsonl + " has no results to draw");
        }
        Files.createDirectories(dir);
        String name = jsonl.getFileName().toString().replaceFirst("\\.jsonl$", "");
        List<Path> written = new ArrayList<>();
        Path throughput = dir.resolve(name + ".throughput.png");
        ThroughputChart.write(file, jsonl.getFileName().toString(), throughput);
        written.add(throughput);
        Path latency = dir.resolve(name + ".latency.png");
        if (LatencyChart.write(file, jsonl.getFileName().toString(), latency)) {
            written.add(latency);
        } else {
            Files.deleteIfExists(latency);
        }
        return written;
    }
}
