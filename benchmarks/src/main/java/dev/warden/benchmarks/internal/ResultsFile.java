package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@code results.jsonl} read back: its run header, if it has one, and its results in file order.
 * Lines of other shapes (the sustained ledger's rows) are skipped: they are not one workload against
 * one implementation, so they have no place in the pictures.
 *
 * @param header when and where the run was measured; empty for files written before headers were
 * @param results the rows with a scenario and an implementation
 */
public record ResultsFile(Optional<RunHeader> header, List<Result> results) {

    /** Reads {@code file}; a line that is not a JSON object fails, naming the file and line. */
    public static ResultsFile read(Path file) throws IOException {
        Optional<RunHeader> header = Optional.empty();
        List<Result> results = new ArrayList<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> fields;
            try {
                fields = JsonLine.parse(line);
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ":" + (i + 1) + ": " + e.getMessage(), e);
            }
            if (fields.get("implementation") instanceof String) {
                results.add(Result.fromJson(line));
            } else if (header.isEmpty()) {
                header = RunHeader.from(fields);
            }
        }
        return new ResultsFile(header, List.copyOf(results));
    }
}
