package dev.warden.lock.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The settings a project's Markdown documentation names in its tables, so a test can hold them
 * against the settings the code declares ({@code LockProvider.optionNames()}): a setting added without
 * its row, or a row left for a setting that is gone, fails that test. A table's setting names are the
 * names in backticks in the first cell of each row, written in full.
 */
public final class DocumentedSettings {

    private static final Pattern NAME = Pattern.compile("`([a-z][a-z0-9.-]*)`");

    private DocumentedSettings() {
    }

    /** The full names starting with {@code prefix} in the first cell of a table row of any {@code *.md} under {@code docs}. */
    public static SortedSet<String> inTables(Path docs, String prefix) {
        SortedSet<String> names = new TreeSet<>();
        try (Stream<Path> pages = Files.list(docs)) {
            for (Path page : pages.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
                    names.addAll(firstCell(line, prefix));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the documentation under " + docs, e);
        }
        return names;
    }

    /** The names starting with {@code prefix} in a table row's first cell; none for any other line. */
    static List<String> firstCell(String line, String prefix) {
        if (!line.startsWith("|") || line.startsWith("|---") || line.indexOf('|', 1) < 0) {
            return List.of();
        }
        Matcher m = NAME.matcher(line.substring(1, line.indexOf('|', 1)));
        List<String> found = new java.util.ArrayList<>();
        while (m.find()) {
            if (m.group(1).startsWith(prefix)) {
                found.add(m.group(1));
            }
        }
        return found;
    }
}
