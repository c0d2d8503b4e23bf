package dev.warden.examples.spring;

import com.jayway.jsonpath.JsonPath;
import dev.warden.lock.spi.LockProvider;
import dev.warden.quota.redis.QuotaConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

/**
 * The manual's code is code: every {@code ```java} block of README.md and docs/*.md compiles against this
 * module's test class path (lock-api, lock-redis, quota-core, quota-ledger, warden-micrometer, warden-shedlock with
 * shedlock-core, the starter, this example's own classes, Spring, Micrometer, SLF4J), and every {@code warden.*} key
 * written in a {@code ```properties} or {@code ```yaml} block is a setting Warden declares.
 *
 * <p><b>How a block is compiled</b> (deterministic, from the block's text alone):
 * <ul>
 *   <li>A block with a {@code package} line, or a {@code class}/{@code record}/{@code interface}/{@code enum}
 *       declaration starting at column 0, is a whole compilation unit and compiles as written.</li>
 *   <li>Otherwise its {@code import} lines are hoisted and the rest is wrapped in
 *       {@code abstract class DocBlock { ... }}: as class members when its first code line starts with
 *       {@code @}, {@code public}, {@code protected}, {@code private}, {@code static} or {@code abstract}
 *       (methods, e.g. {@code @WithLock} examples), else as statements in
 *       {@code void example() throws Exception { ... }}.</li>
 *   <li><b>A hidden prelude</b> gives a fragment what it assumes: an HTML comment opening with
 *       {@code <!-- compile:} right before the fence (blank lines between allowed), invisible when the
 *       Markdown is rendered. Its {@code import} lines are added to the block's imports; its other lines
 *       become members of {@code DocBlock}, so a field ({@code QuotaService quota;}) or an abstract helper
 *       ({@code abstract long price(long balance);}) declares what the prose leaves to the reader:
 *       <pre>{@code
 * <!-- compile:
 * import dev.warden.quota.QuotaService;
 * QuotaService quota;
 * abstract long price(long balance);
 * -->
 * ```java
 * quota.charge("merchant-42", "order-1", balance -> price(balance));
 * ```}</pre></li>
 * </ul>
 * Blocks in other languages are not compiled. A block that does not compile fails its own dynamic test,
 * named {@code <file>:<line of the fence>}, with every error mapped back to its line in the Markdown and the
 * source as compiled; finding no Java block at all fails too, so the test cannot pass vacuously.
 *
 * <p><b>Configuration keys</b>: a {@code warden.*} key in a properties or YAML block must be one of
 * {@code QuotaConfig.settingNames()} (quota-core), a {@code warden.lock.<backend>.<option>} of a
 * {@code LockProvider} on the class path ({@code optionNames()}), a property of the starter's configuration
 * metadata ({@code warden.metrics.*}, {@code warden.lock.enabled}, ...), or a {@code warden.lock.} name in the
 * first cell of a settings table (first column "setting") of the docs (the common settings in docs/locks.md, the options of
 * backends not on this class path): lock-api's, lock-etcd's and lock-zookeeper's {@code *SettingsDocumentedTest}
 * hold those tables equal to what the code declares ({@code Settings.COMMON} is not public).
 */
class ManualCodeBlocksTest {

    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static final Pattern FENCE = Pattern.compile("^( {0,3})(`{3,}|~{3,})\\s*([^`\\s]*).*$");
    private static final Pattern TYPE_DECLARATION = Pattern.compile(
            "^(?:(?:public|protected|private|abstract|final|sealed|non-sealed|static|strictfp)\\s+)*"
                    + "(?:class|record|interface|enum|@interface)\\s+([A-Za-z_$][\\w$]*)");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public\\s+(?:(?:abstract|final|sealed|non-sealed|static|strictfp)\\s+)*"
                    + "(?:class|record|interface|enum|@interface)\\s+([A-Za-z_$][\\w$]*)");
    private static final Pattern MEMBER_START = Pattern.compile("^(?:@|(?:public|protected|private|static|abstract)\\b)");
    private static final String PRELUDE_OPEN = "<!-- compile:";
    private static final Pattern WARDEN_KEY = Pattern.compile("warden\\.[A-Za-z0-9_.\\-\\[\\]]+");

    private static StandardJavaFileManager fileManager;

    /** One line of a Markdown page, with its 1-based number. */
    record Line(int number, String text) {
    }

    /** A fenced block: the page (relative to the repository root), the fence's line, its language, its lines, its prelude. */
    record Block(String page, int line, String language, List<Line> code, List<Line> prelude) {

        String where() {
            return page + ":" + line;
        }
    }

    /** A block as compiled: the class name, the source, and for each of its lines the Markdown line it came from (0: generated). */
    record Source(String className, List<String> lines, List<Integer> origins) {

        String text() {
            return String.join("\n", lines) + "\n";
        }
    }

    @AfterAll
    static void closeFileManager() throws IOException {
        if (fileManager != null) {
            fileManager.close();
        }
    }

    @TestFactory
    @DisplayName("every ```java block of README.md and docs/*.md compiles")
    Stream<DynamicTest> everyJavaBlockCompiles() {
        List<Block> java = blocks().stream().filter(b -> b.language().equals("java")).toList();
        assertThat(java).as("```java blocks in README.md and docs/*.md under %s", ROOT).isNotEmpty();
        System.out.println("compiling " + java.size() + " ```java blocks: " + java.stream()
                .collect(Collectors.groupingBy(Block::page, TreeMap::new, Collectors.counting())));
        return java.stream().map(block -> dynamicTest(block.where(), () -> assertCompiles(block)));
    }

    @Test
    @DisplayName("every warden.* key of a ```properties or ```yaml block in README.md and docs/*.md is a declared setting")
    void everyWardenKeyIsASetting() {
        Map<String, List<String>> keys = new TreeMap<>();
        for (Block block : blocks()) {
            List<String> found = switch (block.language()) {
                case "properties" -> propertiesKeys(block.code());
                case "yaml", "yml" -> yamlKeys(block.code());
                default -> List.of();
            };
            found.stream().filter(k -> k.startsWith("warden."))
                    .forEach(k -> keys.computeIfAbsent(k, x -> new ArrayList<>()).add(block.where()));
        }
        assertThat(keys).as("warden.* keys in the properties and YAML blocks of the docs").isNotEmpty();
        SortedSet<String> known = knownSettings();
        Map<String, List<String>> unknown = new TreeMap<>(keys);
        unknown.keySet().removeAll(known);
        assertThat(unknown).as("keys no part of Warden declares (key=[blocks]); known settings: %s", known).isEmpty();
    }

    // ---- reading the manual ----

    /** README.md and every docs/*.md, in that order. */
    static List<Path> pages() {
        assertThat(ROOT.resolve("pom.xml")).as("the repository root, from the module directory").exists();
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    static List<Block> blocks() {
        List<Block> blocks = new ArrayList<>();
        for (Path page : pages()) {
            try {
                blocks.addAll(blocks(ROOT.relativize(page).toString().replace(File.separatorChar, '/'),
                        Files.readAllLines(page, StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + page, e);
            }
        }
        return blocks;
    }

    /** The fenced blocks of one page, each with the prelude comment right before it, if any. */
    static List<Block> blocks(String page, List<String> lines) {
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int indent = open.group(1).length();
            String fence = open.group(2);
            String language = open.group(3).toLowerCase(Locale.ROOT);
            List<Line> code = new ArrayList<>();
            int j = i + 1;
            for (; j < lines.size(); j++) {
                String line = lines.get(j);
                String stripped = line.strip();
                if (stripped.startsWith(fence) && stripped.chars().allMatch(c -> c == fence.charAt(0))) {
                    break;
                }
                int drop = 0;
                while (drop < indent && drop < line.length() && line.charAt(drop) == ' ') {
                    drop++;
                }
                code.add(new Line(j + 1, line.substring(drop)));
            }
            assertThat(j).as("%s:%d: the fence is closed", page, i + 1).isLessThan(lines.size());
            blocks.add(new Block(page, i + 1, language, code, prelude(lines, i)));
            i = j;
        }
        return blocks;
    }

    /** The lines of a {@code <!-- compile: ... -->} comment ending right before line index {@code fence}; empty when none. */
    static List<Line> prelude(List<String> lines, int fence) {
        int end = fence - 1;
        while (end >= 0 && lines.get(end).isBlank()) {
            end--;
        }
        if (end < 0 || !lines.get(end).strip().endsWith("-->")) {
            return List.of();
        }
        int start = end;
        while (start >= 0 && !lines.get(start).contains("<!--")) {
            start--;
        }
        if (start < 0 || !lines.get(start).strip().startsWith(PRELUDE_OPEN)) {
            return List.of();
        }
        List<Line> prelude = new ArrayList<>();
        for (int k = start; k <= end; k++) {
            String text = lines.get(k);
            if (k == start) {
                text = text.substring(text.indexOf(PRELUDE_OPEN) + PRELUDE_OPEN.length());
            }
            if (k == end) {
                text = text.substring(0, text.lastIndexOf("-->"));
            }
            if (!text.isBlank()) {
                prelude.add(new Line(k + 1, text));
            }
        }
        return prelude;
    }

    // ---- compiling a block ----

    /** The block as a compilation unit (see the class comment). */
    static Source source(Block block) {
        List<String> out = new ArrayList<>();
        List<Integer> origins = new ArrayList<>();
        List<Line> imports = new ArrayList<>();
        List<Line> members = new ArrayList<>();
        for (Line l : block.prelude()) {
            (isImport(l.text()) ? imports : members).add(new Line(l.number(), l.text().strip()));
        }
        List<Line> body = new ArrayList<>();
        for (Line l : block.code()) {
            (isImport(l.text()) ? imports : body).add(l);
        }
        boolean unit = block.code().stream().anyMatch(l -> l.text().startsWith("package ")
                || TYPE_DECLARATION.matcher(l.text()).find());
        if (unit) {
            assertThat(members).as("%s: a prelude's members need a fragment, this block is a whole compilation unit",
                    block.where()).isEmpty();
            String className = block.code().stream().map(l -> PUBLIC_TYPE.matcher(l.text()))
                    .filter(Matcher::find).map(m -> m.group(1)).findFirst().orElse("DocBlock");
            // The package line first, then the prelude's imports, then the rest in order.
            List<Line> rest = new ArrayList<>(block.code());
            rest.stream().filter(l -> l.text().startsWith("package ")).findFirst().ifPresent(p -> {
                add(out, origins, p.text(), p.number());
                rest.remove(p);
            });
            block.prelude().stream().filter(l -> isImport(l.text())).forEach(l -> add(out, origins, l.text().strip(), l.number()));
            rest.forEach(l -> add(out, origins, l.text(), l.number()));
            return new Source(className, out, origins);
        }
        String first = body.stream().map(l -> l.text().strip())
                .filter(t -> !t.isEmpty() && !t.startsWith("//") && !t.startsWith("/*") && !t.startsWith("*"))
                .findFirst().orElse("");
        boolean asMembers = MEMBER_START.matcher(first).find();
        imports.forEach(l -> add(out, origins, l.text().strip(), l.number()));
        add(out, origins, "abstract class DocBlock {", 0);
        members.forEach(l -> add(out, origins, "    " + l.text(), l.number()));
        if (!asMembers) {
            add(out, origins, "void example() throws Exception {", 0);
        }
        body.forEach(l -> add(out, origins, "    " + l.text(), l.number()));
        if (!asMembers) {
            add(out, origins, "}", 0);
        }
        add(out, origins, "}", 0);
        return new Source("DocBlock", out, origins);
    }

    private static boolean isImport(String line) {
        return line.strip().startsWith("import ") && line.strip().endsWith(";");
    }

    private static void add(List<String> out, List<Integer> origins, String text, int origin) {
        out.add(text);
        origins.add(origin);
    }

    static void assertCompiles(Block block) throws IOException {
        Source source = source(block);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK's compiler (javax.tools)").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavaFileObject unit = new SimpleJavaFileObject(URI.create("string:///" + source.className() + ".java"),
                JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source.text();
            }
        };
        boolean ok = compiler.getTask(null, new InMemoryOutput(fileManager(compiler)), diagnostics,
                List.of("-proc:none", "-Xlint:none", "-nowarn"), null, List.of(unit)).call();
        List<Diagnostic<? extends JavaFileObject>> errors = diagnostics.getDiagnostics().stream()
                .filter(d -> d.getKind() == Diagnostic.Kind.ERROR).toList();
        if (!ok || !errors.isEmpty()) {
            throw new AssertionError(report(block, source, errors));
        }
    }

    /** The file, the block's line, every error at its line in the Markdown, and the source as compiled. */
    static String report(Block block, Source source, List<Diagnostic<? extends JavaFileObject>> errors) {
        StringBuilder s = new StringBuilder();
        s.append(block.page()).append(": the ```java block at line ").append(block.line()).append(" does not compile (")
                .append(errors.size()).append(errors.size() == 1 ? " error" : " errors").append("):\n");
        for (Diagnostic<? extends JavaFileObject> d : errors) {
            int generated = (int) d.getLineNumber();
            int origin = generated >= 1 && generated <= source.origins().size() ? source.origins().get(generated - 1) : 0;
            s.append("  ").append(block.page()).append(':')
                    .append(origin > 0 ? String.valueOf(origin) : "(wrapper line " + generated + ")").append(": ")
                    .append(d.getMessage(Locale.ROOT).replace("\n", "\n      ")).append('\n');
            if (generated >= 1 && generated <= source.lines().size()) {
                s.append("      | ").append(source.lines().get(generated - 1).strip()).append('\n');
            }
        }
        s.append("compiled as ").append(source.className())
                .append(".java (see ManualCodeBlocksTest's comment for how a fragment is wrapped, and for the <!-- compile: --> prelude):\n");
        for (int i = 0; i < source.lines().size(); i++) {
            int origin = source.origins().get(i);
            s.append(String.format(Locale.ROOT, "  %5s | %s%n", origin > 0 ? String.valueOf(origin) : "", source.lines().get(i)));
        }
        return s.toString();
    }

    /** One file manager for every block: the test class path is opened once. */
    private static synchronized StandardJavaFileManager fileManager(JavaCompiler compiler) throws IOException {
        if (fileManager == null) {
            List<File> classPath = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                    .filter(p -> !p.isBlank()).map(File::new).filter(File::exists).toList();
            assertThat(classPath).as("the test class path (java.class.path)").hasSizeGreaterThan(1);
            fileManager = compiler.getStandardFileManager(null, Locale.ROOT, StandardCharsets.UTF_8);
            fileManager.setLocation(StandardLocation.CLASS_PATH, classPath);
        }
        return fileManager;
    }

    /** Class files go to memory and are dropped: only the diagnostics matter. */
    private static final class InMemoryOutput extends ForwardingJavaFileManager<JavaFileManager> {

        InMemoryOutput(JavaFileManager delegate) {
            super(delegate);
        }

        @Override
        public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
                                                   FileObject sibling) {
            return new SimpleJavaFileObject(URI.create("mem:///" + className.replace('.', '/') + kind.extension), kind) {
                @Override
                public OutputStream openOutputStream() {
                    return new ByteArrayOutputStream();
                }
            };
        }

        @Override
        public void close() {
            // the shared file manager is closed once, after every block
        }
    }

    // ---- configuration keys ----

    /** {@code key=value}, {@code key: value} or {@code key value} lines; comments skipped. */
    static List<String> propertiesKeys(List<Line> code) {
        List<String> keys = new ArrayList<>();
        for (Line l : code) {
            String t = l.text().strip();
            if (t.isEmpty() || t.startsWith("#") || t.startsWith("!")) {
                continue;
            }
            Matcher m = Pattern.compile("^([^=:\\s]+)").matcher(t);
            if (m.find()) {
                keys.add(m.group(1));
            }
        }
        return keys;
    }

    /**
     * The full keys of a YAML block's leaves (a key with a value, or with a list under it), its nesting read
     * from the indentation; comments and list items skipped. Enough for the maps the docs show.
     */
    static List<String> yamlKeys(List<Line> code) {
        record Entry(int indent, String key, boolean hasValue, boolean listItem) {
        }
        List<Entry> entries = new ArrayList<>();
        Pattern keyValue = Pattern.compile("^([^#:\\s][^:]*?):(?:\\s+(.*))?$");
        for (Line l : code) {
            String text = l.text().replaceAll("(^|\\s)#.*$", "");
            if (text.isBlank() || text.strip().equals("---")) {
                continue;
            }
            int indent = text.length() - text.stripLeading().length();
            String t = text.strip();
            if (t.startsWith("- ") || t.equals("-")) {
                entries.add(new Entry(indent, null, false, true));
                continue;
            }
            Matcher m = keyValue.matcher(t);
            if (m.matches()) {
                entries.add(new Entry(indent, m.group(1).strip(), m.group(2) != null && !m.group(2).isBlank(), false));
            }
        }
        List<String> keys = new ArrayList<>();
        List<Entry> path = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (e.listItem()) {
                continue;
            }
            while (!path.isEmpty() && path.get(path.size() - 1).indent() >= e.indent()) {
                path.remove(path.size() - 1);
            }
            path.add(e);
            Entry next = i + 1 < entries.size() ? entries.get(i + 1) : null;
            boolean hasChildMap = next != null && !next.listItem() && next.indent() > e.indent();
            if (e.hasValue() || !hasChildMap) {
                keys.add(path.stream().map(Entry::key).collect(Collectors.joining(".")));
            }
        }
        return keys;
    }

    /** Every {@code warden.*} setting the modules on this class path declare (see the class comment). */
    static SortedSet<String> knownSettings() {
        SortedSet<String> known = new TreeSet<>(QuotaConfig.settingNames());
        for (LockProvider provider : ServiceLoader.load(LockProvider.class)) {
            provider.optionNames().forEach(option -> known.add("warden.lock." + provider.backend() + "." + option));
        }
        known.addAll(starterProperties());
        Pattern lockSetting = Pattern.compile("`(warden\\.lock\\.[a-z0-9.-]+)`");
        for (Path page : pages()) {
            try {
                boolean settingsTable = false;
                String previous = "";
                for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
                    boolean row = line.startsWith("|") && line.indexOf('|', 1) > 0;
                    if (row && !previous.startsWith("|")) {
                        // A table's header: only tables whose first column is "setting" list settings.
                        settingsTable = line.substring(1, line.indexOf('|', 1)).strip().equals("setting");
                    } else if (row && settingsTable && !line.startsWith("|---")) {
                        Matcher m = lockSetting.matcher(line.substring(1, line.indexOf('|', 1)));
                        while (m.find()) {
                            known.add(m.group(1));
                        }
                    }
                    previous = line;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return known;
    }

    /** The {@code warden.*} properties of the configuration metadata on the class path (the starter's). */
    static List<String> starterProperties() {
        List<String> names = new ArrayList<>();
        try {
            for (URL url : Collections.list(ManualCodeBlocksTest.class.getClassLoader()
                    .getResources("META-INF/spring-configuration-metadata.json"))) {
                String json;
                try (InputStream in = url.openStream()) {
                    json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                if (!json.contains("\"warden.")) {
                    continue;
                }
                List<String> properties = JsonPath.read(json, "$.properties[*].name");
                properties.stream().filter(name -> WARDEN_KEY.matcher(name).matches()).forEach(names::add);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(names).as("the starter's configuration metadata (warden.* properties)").isNotEmpty();
        return names;
    }
}
