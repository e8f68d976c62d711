package org.jiwarp.conformance.matrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jiwarp.conform.ConformCase;
import org.jiwarp.conform.Role;
import org.jiwarp.conformance.adversarial.AdversarialCatalogue;
import org.jiwarp.conformance.conform.JiwarpRpingConformTest;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks the requirement matrix {@code rfc-requirements.tsv}: every applicable MUST and MUST NOT of
 * RFC 5044, 5041, 5040, 6581 and 7306 names at least one test, every named test exists in some module's
 * test sources (and every named case in its catalogue), every adversarial catalogue case backs some requirement, and the coverage per RFC and
 * level is printed and written to {@code target/rfc-coverage.md}, and every named test ran and
 * passed in this build (the surefire reports of every module, {@link TestReports}).
 *
 * <p>A test is named {@code Class#method}, found by scanning {@code ../*}{@code /src/test/java} for a
 * {@code void method(} inside the body of {@code class Class}; or {@code Class#method[case]} for one
 * case of a catalogue that a parameterized test runs, one invocation a case ({@link #CATALOGUES}):
 * {@code AdversarialPeerTest#catalogue[case]} for jiwarp's white-box catalogue,
 * {@code JiwarpRpingConformTest#targetListens[case]} and {@code #targetConnects[case]} for the
 * conformance library's cases against jiwarp's rping.
 */
class RequirementMatrixTest {

    private static final String RESOURCE = "/rfc-requirements.tsv";
    private static final List<String> RFCS = List.of("5044", "5041", "5040", "6581", "7306");
    private static final List<String> LEVELS = List.of("MUST", "MUST NOT", "SHOULD", "SHOULD NOT");
    private static final Pattern TEST_REF = Pattern.compile("([A-Za-z_$][\\w$]*)#([A-Za-z_$][\\w$]*)(?:\\[([a-z0-9-]+)])?");
    /** Each parameterized test that runs a catalogue, {@code Class#method}, with its cases in the order they run. */
    private static final Map<String, List<String>> CATALOGUES = Map.of(
            "AdversarialPeerTest#catalogue", List.copyOf(AdversarialCatalogue.names()),
            "JiwarpRpingConformTest#targetListens", names(JiwarpRpingConformTest.cases(Role.TARGET_LISTENS)),
            "JiwarpRpingConformTest#targetConnects", names(JiwarpRpingConformTest.cases(Role.TARGET_CONNECTS)));
    private static final String NEGOTIATION_TABLE = "MpaNegotiationTableTest";
    /** When this build started (Maven's build timestamp, UTC, ISO 8601), passed on by surefire. */
    private static final String BUILD_START = "jiwarp.buildStart";

    /** One row of the matrix. */
    record Requirement(int line, String id, String rfc, String section, String level, String text,
            String applicability, List<String> tests, String notes) {

        boolean applies() {
            return applicability.equals("applies");
        }

        boolean mandatory() {
            return level.equals("MUST") || level.equals("MUST NOT");
        }

        boolean deviation() {
            return notes.startsWith("DEVIATION");
        }
    }

    private static List<Requirement> rows;

    @BeforeAll
    static void load() throws IOException {
        rows = parse();
    }

    @Test
    void everyRowIsWellFormed() {
        List<String> problems = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (Requirement r : rows) {
            String where = "line " + r.line() + " (" + r.id() + "): ";
            if (!ids.add(r.id())) {
                problems.add(where + "duplicate id");
            }
            if (!RFCS.contains(r.rfc())) {
                problems.add(where + "unknown RFC " + r.rfc());
            }
            if (!r.id().matches(Pattern.quote(r.rfc() + "-" + r.section() + "-") + "\\d{2}")) {
                problems.add(where + "id is not <rfc>-<section>-<nn>");
            }
            if (!r.section().matches("\\d+(\\.\\d+)*|[A-C](\\.\\d+)*")) {
                problems.add(where + "bad section " + r.section());
            }
            if (!LEVELS.contains(r.level())) {
                problems.add(where + "bad level " + r.level());
            }
            if (r.text().isBlank()) {
                problems.add(where + "no requirement text");
            }
            if (!r.applies() && !r.applicability().matches("not-applicable: \\S.*")) {
                problems.add(where + "applicability is neither 'applies' nor 'not-applicable: <reason>'");
            }
            if (r.deviation() && !r.applies()) {
                problems.add(where + "a deviation from a requirement that does not apply");
            }
            for (String test : r.tests()) {
                if (!TEST_REF.matcher(test).matches()) {
                    problems.add(where + "test reference is not Class#method: " + test);
                }
            }
        }
        assertNoProblems(problems);
        assertTrue(rows.size() > 200, "the matrix lost its rows: " + rows.size());
        for (String rfc : RFCS) {
            assertTrue(rows.stream().anyMatch(r -> r.rfc().equals(rfc)), "no rows for RFC " + rfc);
        }
    }

    @Test
    void everyApplicableMustHasATest() {
        List<String> untested = rows.stream()
                .filter(r -> r.applies() && r.mandatory() && r.tests().isEmpty())
                .map(r -> r.id() + " " + r.level() + ": " + r.text())
                .toList();
        assertNoProblems(untested);
    }

    /**
     * A negotiation table that runs jiwarp against itself cannot show what a foreign peer sees: a
     * row it names also names a test that looks at the octets on a real connection.
     */
    @Test
    void noRequirementRestsOnlyOnTheJiwarpToJiwarpTable() {
        List<String> problems = rows.stream()
                .filter(r -> r.applies() && r.tests().stream().anyMatch(t -> t.startsWith(NEGOTIATION_TABLE + "#everyCombination"))
                        && r.tests().stream().allMatch(t -> t.startsWith(NEGOTIATION_TABLE + "#")))
                .map(r -> r.id() + " names only " + r.tests())
                .toList();
        assertNoProblems(problems);
    }

    @Test
    void everyNamedTestExists() throws IOException {
        TestSources sources = TestSources.scan(modulesRoot());
        List<String> problems = new ArrayList<>();
        for (TestRef ref : testRefs()) {
            String id = ref.row().id();
            if (!sources.hasMethod(ref.type(), ref.method())) {
                problems.add(id + ": no method void " + ref.method() + "( in class " + ref.type());
            }
            List<String> catalogue = CATALOGUES.get(ref.type() + "#" + ref.method());
            if (ref.caseName() != null && catalogue == null) {
                problems.add(id + ": only " + CATALOGUES.keySet() + " take a [case]");
            } else if (ref.caseName() != null && !catalogue.contains(ref.caseName())) {
                problems.add(id + ": " + ref.type() + "#" + ref.method() + " runs no case " + ref.caseName());
            }
        }
        assertNoProblems(problems);
    }

    /**
     * Every test a row names ran in this build and passed: read from the surefire reports of every
     * module, so this runs after all of them (its own execution in Maven's integration-test phase of
     * conformance-tests, the last module of the reactor). A catalogue case is the invocation of its
     * test at its position in the catalogue ({@link #CATALOGUES}).
     */
    @Test
    void everyNamedTestRanAndPassedInThisBuild() throws IOException {
        String start = System.getProperty(BUILD_START);
        Prerequisites.require(start != null && !start.isBlank() && !start.startsWith("${"),
                "this check reads the test reports of a whole build; mvn verify runs it after every module's tests");
        TestReports reports = TestReports.read(modulesRoot(), Instant.parse(start));
        assertTrue(reports.reports() > 0, "no test report of this build under " + modulesRoot());
        List<String> problems = new ArrayList<>();
        for (TestRef ref : testRefs()) {
            String test = ref.type() + "#" + ref.method();
            List<String> caseOrder = CATALOGUES.getOrDefault(test, List.of());
            int index = ref.caseName() == null ? -1 : caseOrder.indexOf(ref.caseName());
            String why = ref.caseName() != null && index < 0 ? "names no catalogue case"
                    : reports.whyNotPassed(test, index + 1);
            if (why != null) {
                problems.add(ref.row().id() + ": " + ref.text() + " " + why);
            }
        }
        CATALOGUES.forEach((test, caseOrder) -> {
            if (caseOrder.size() != reports.runs(test).size()) {
                problems.add("the catalogue has " + caseOrder.size() + " cases but " + test + " ran "
                        + reports.runs(test).size() + " times");
            }
        });
        assertNoProblems(problems);
    }

    @Test
    void everyCatalogueCaseBacksARequirement() {
        Map<String, List<Requirement>> byCase = new HashMap<>();
        for (Requirement r : rows) {
            for (String test : r.tests()) {
                Matcher m = TEST_REF.matcher(test);
                if (m.matches() && m.group(3) != null) {
                    byCase.computeIfAbsent(m.group(3), k -> new ArrayList<>()).add(r);
                }
            }
        }
        List<String> problems = new ArrayList<>();
        for (String name : AdversarialCatalogue.names()) {
            if (!byCase.containsKey(name)) {
                problems.add("no requirement names catalogue case " + name);
            }
        }
        // A case that expects jiwarp's behaviour instead of the RFC's belongs to a row marked DEVIATION.
        for (String name : AdversarialCatalogue.deviationNames()) {
            if (byCase.getOrDefault(name, List.of()).stream().noneMatch(Requirement::deviation)) {
                problems.add("deviation case " + name + " backs no requirement marked DEVIATION");
            }
        }
        assertNoProblems(problems);
    }

    /**
     * The report, as written and read back, has one row per RFC and level and their totals, and
     * the totals add up: each RFC's levels to its "all" row, each level's RFCs to its "all" row, and
     * the grand total to the matrix's rows as counted straight from the file.
     */
    @Test
    void coverageIsReportedPerRfcAndLevel() throws IOException {
        String table = coverageTable();
        System.out.println(table);
        Path out = Path.of("target", "rfc-coverage.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, table, StandardCharsets.UTF_8);
        Map<String, long[]> report = new LinkedHashMap<>();
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            Matcher m = REPORT_ROW.matcher(line);
            if (m.matches()) {
                long[] counts = new long[4];
                for (int i = 0; i < 4; i++) {
                    counts[i] = Long.parseLong(m.group(3 + i));
                }
                assertNull(report.put(m.group(1) + "/" + m.group(2), counts), "row reported twice: " + line);
            }
        }
        List<String> rfcs = new ArrayList<>(RFCS);
        rfcs.add("all");
        List<String> levels = new ArrayList<>(LEVELS);
        levels.add("all");
        assertEquals(rfcs.size() * levels.size(), report.size(), "rows of the report: " + report.keySet());
        for (String rfc : rfcs) {
            assertSums(report, rfc + "/all", LEVELS.stream().map(level -> rfc + "/" + level).toList());
        }
        for (String level : levels) {
            assertSums(report, "all/" + level, RFCS.stream().map(rfc -> rfc + "/" + level).toList());
        }
        assertEquals(matrixRowsInTheFile(), report.get("all/all")[0], "the grand total against the file's rows");
    }

    private static final Pattern REPORT_ROW = Pattern.compile(
            "\\| (\\S+) \\| ([A-Z ]+|all) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|");

    private static void assertSums(Map<String, long[]> report, String total, List<String> parts) {
        long[] expected = report.get(total);
        assertNotNull(expected, "no row " + total);
        long[] sum = new long[4];
        for (String part : parts) {
            long[] counts = report.get(part);
            assertNotNull(counts, "no row " + part);
            for (int i = 0; i < 4; i++) {
                sum[i] += counts[i];
            }
        }
        assertArrayEquals(expected, sum, total + " against the sum of " + parts);
    }

    /** Requirement rows of the matrix counted straight from its lines: not a comment, a blank or the header. */
    private static long matrixRowsInTheFile() throws IOException {
        try (InputStream in = RequirementMatrixTest.class.getResourceAsStream(RESOURCE)) {
            assertNotNull(in, RESOURCE);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(line -> !line.isBlank() && !line.startsWith("#") && !line.startsWith("id\t"))
                    .count();
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static String coverageTable() {
        StringBuilder md = new StringBuilder();
        md.append("# RFC requirement coverage\n\n")
                .append("From `conformance-tests/src/test/resources/rfc-requirements.tsv`. *Covered* counts "
                        + "applicable requirements that name at least one test; *deviations* are applicable "
                        + "requirements jiwarp does not meet (their tests assert jiwarp's behaviour).\n\n")
                .append("| RFC | level | total | applicable | covered | deviations |\n")
                .append("|---|---|---:|---:|---:|---:|\n");
        for (String rfc : RFCS) {
            for (String level : LEVELS) {
                row(md, rfc, level, rows.stream().filter(r -> r.rfc().equals(rfc) && r.level().equals(level)).toList());
            }
            row(md, rfc, "all", rows.stream().filter(r -> r.rfc().equals(rfc)).toList());
        }
        for (String level : LEVELS) {
            row(md, "all", level, rows.stream().filter(r -> r.level().equals(level)).toList());
        }
        row(md, "all", "all", rows);
        return md.toString();
    }

    private static void row(StringBuilder md, String rfc, String level, List<Requirement> selected) {
        long applicable = selected.stream().filter(Requirement::applies).count();
        long covered = selected.stream().filter(r -> r.applies() && !r.tests().isEmpty()).count();
        long deviations = selected.stream().filter(Requirement::deviation).count();
        md.append("| ").append(rfc).append(" | ").append(level).append(" | ").append(selected.size())
                .append(" | ").append(applicable).append(" | ").append(covered).append(" | ").append(deviations)
                .append(" |\n");
    }

    /** A well-formed test reference of a row: {@code Type#method} or {@code Type#method[case]}. */
    record TestRef(Requirement row, String text, String type, String method, String caseName) {
    }

    /** Every well-formed test reference of every row (the others are reported by everyRowIsWellFormed). */
    private static List<TestRef> testRefs() {
        List<TestRef> refs = new ArrayList<>();
        for (Requirement r : rows) {
            for (String test : r.tests()) {
                Matcher m = TEST_REF.matcher(test);
                if (m.matches()) {
                    refs.add(new TestRef(r, test, m.group(1), m.group(2), m.group(3)));
                }
            }
        }
        return refs;
    }

    private static List<Requirement> parse() throws IOException {
        InputStream in = RequirementMatrixTest.class.getResourceAsStream(RESOURCE);
        assertNotNull(in, RESOURCE + " is not on the test class path");
        List<Requirement> parsed = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            int number = 0;
            boolean header = false;
            while ((line = reader.readLine()) != null) {
                number++;
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                String[] cells = line.split("\t", -1);
                if (!header) {
                    assertEquals("id\trfc\tsection\tlevel\trequirement\tapplicability\ttests\tnotes", line,
                            "column header");
                    header = true;
                    continue;
                }
                if (cells.length != 8) {
                    problems.add("line " + number + ": " + cells.length + " columns, expected 8");
                    continue;
                }
                List<String> tests = new ArrayList<>();
                for (String test : cells[6].split(",")) {
                    if (!test.isBlank()) {
                        tests.add(test.strip());
                    }
                }
                parsed.add(new Requirement(number, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5],
                        List.copyOf(tests), cells[7]));
            }
        }
        assertNoProblems(problems);
        return parsed;
    }

    /** The directory holding every module, the parent of this module's directory. */
    private static Path modulesRoot() {
        String basedir = System.getProperty("basedir");
        Path module = basedir != null ? Path.of(basedir) : Path.of("").toAbsolutePath();
        return module.toAbsolutePath().normalize().getParent();
    }

    private static List<String> names(List<ConformCase> cases) {
        return cases.stream().map(ConformCase::name).toList();
    }

    private static void assertNoProblems(List<String> problems) {
        if (!problems.isEmpty()) {
            fail(problems.size() + " problem(s):\n  " + String.join("\n  ", problems));
        }
    }

    /**
     * The test classes of every module, each simple class name mapped to the bodies (comments and
     * literals blanked) of the classes of that name.
     */
    static final class TestSources {

        private static final Pattern CLASS = Pattern.compile("\\b(?:class|record|enum|interface)\\s+([A-Za-z_$][\\w$]*)");

        private final Map<String, List<String>> bodies = new LinkedHashMap<>();

        static TestSources scan(Path root) throws IOException {
            TestSources sources = new TestSources();
            List<Path> testRoots;
            try (Stream<Path> modules = Files.list(root)) {
                testRoots = modules.map(m -> m.resolve("src/test/java")).filter(Files::isDirectory).sorted().toList();
            }
            assertTrue(testRoots.size() >= 5, "found too few modules' test sources under " + root + ": " + testRoots);
            for (Path testRoot : testRoots) {
                try (Stream<Path> files = Files.walk(testRoot)) {
                    files.filter(f -> f.toString().endsWith(".java")).forEach(sources::add);
                }
            }
            return sources;
        }

        boolean hasMethod(String type, String method) {
            Pattern declaration = Pattern.compile("\\bvoid\\s+" + Pattern.quote(method) + "\\s*\\(");
            return bodies.getOrDefault(type, List.of()).stream().anyMatch(b -> declaration.matcher(b).find());
        }

        private void add(Path file) {
            String code;
            try {
                code = blankCommentsAndLiterals(Files.readString(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Matcher m = CLASS.matcher(code);
            while (m.find()) {
                int open = code.indexOf('{', m.end());
                if (open < 0) {
                    break;
                }
                int close = matchingBrace(code, open);
                bodies.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(code.substring(open, close));
            }
        }

        private static int matchingBrace(String code, int open) {
            int depth = 0;
            for (int i = open; i < code.length(); i++) {
                char c = code.charAt(i);
                if (c == '{') {
                    depth++;
                } else if (c == '}' && --depth == 0) {
                    return i + 1;
                }
            }
            return code.length();
        }

        /** Java source with comments, strings, text blocks and char literals replaced by spaces. */
        static String blankCommentsAndLiterals(String src) {
            StringBuilder out = new StringBuilder(src.length());
            int i = 0;
            int n = src.length();
            while (i < n) {
                char c = src.charAt(i);
                int end;
                if (src.startsWith("//", i)) {
                    end = src.indexOf('\n', i);
                    end = end < 0 ? n : end;
                } else if (src.startsWith("/*", i)) {
                    end = src.indexOf("*/", i + 2);
                    end = end < 0 ? n : end + 2;
                } else if (src.startsWith("\"\"\"", i)) {
                    end = literalEnd(src, i + 3, "\"\"\"");
                } else if (c == '"') {
                    end = literalEnd(src, i + 1, "\"");
                } else if (c == '\'') {
                    end = literalEnd(src, i + 1, "'");
                } else {
                    out.append(c);
                    i++;
                    continue;
                }
                for (int j = i; j < end; j++) {
                    out.append(src.charAt(j) == '\n' ? '\n' : ' ');
                }
                i = end;
            }
            return out.toString();
        }

        private static int literalEnd(String src, int from, String quote) {
            int i = from;
            while (i < src.length()) {
                if (src.charAt(i) == '\\') {
                    i += 2;
                } else if (src.startsWith(quote, i)) {
                    return i + quote.length();
                } else {
                    i++;
                }
            }
            return src.length();
        }
    }

    @Test
    void theSourceScannerSeesThroughCommentsAndLiterals() {
        String src = "class A { // void fake(\n String s = \"void alsoFake( }\"; char c = '}'; /* } */ void real() {} }";
        String code = TestSources.blankCommentsAndLiterals(src);
        assertEquals(src.length(), code.length());
        assertTrue(code.contains("void real()"), code);
        assertFalse(code.contains("fake") || code.contains("Fake"), code);
    }
}
