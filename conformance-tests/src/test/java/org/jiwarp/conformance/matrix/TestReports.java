package org.jiwarp.conformance.matrix;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The surefire XML reports ({@code target/surefire-reports/TEST-*.xml}) every module wrote in this
 * build: for each {@code SimpleClass#method}, how its runs ended. A report written before the build
 * started is someone else's build and counts for nothing.
 *
 * <p>Surefire names a parameterized or dynamic run {@code method(Type)[n]}; the part before the
 * parenthesis is the method, {@code n} the invocation (1-based).
 */
final class TestReports {

    /** How one run of a test ended. */
    enum Result { PASSED, FAILED, SKIPPED }

    /** One {@code <testcase>}: its invocation index (0 for a plain test) and result. */
    record Run(int invocation, Result result) {
    }

    private static final Pattern TESTCASE = Pattern.compile(
            "<testcase\\s+name=\"([^\"]*)\"\\s+classname=\"([^\"]*)\"[^>]*?(/>|>(.*?)</testcase>)", Pattern.DOTALL);
    private static final Pattern INVOCATION = Pattern.compile("\\[(\\d+)]$");

    private final Map<String, List<Run>> runs = new HashMap<>();
    private final List<Path> stale = new ArrayList<>();
    private int reports;

    /** Reads the reports under {@code modulesRoot/*}{@code /target/surefire-reports} written at or after {@code buildStart}. */
    static TestReports read(Path modulesRoot, Instant buildStart) throws IOException {
        TestReports found = new TestReports();
        List<Path> dirs;
        try (Stream<Path> modules = Files.list(modulesRoot)) {
            dirs = modules.map(m -> m.resolve("target/surefire-reports")).filter(Files::isDirectory).sorted().toList();
        }
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.list(dir)) {
                files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).sorted()
                        .forEach(f -> found.add(f, buildStart));
            }
        }
        return found;
    }

    private void add(Path report, Instant buildStart) {
        try {
            // Maven's build timestamp has whole seconds: a report from the build's first second counts.
            if (Files.getLastModifiedTime(report).toInstant().isBefore(buildStart)) {
                stale.add(report);
                return;
            }
            reports++;
            Matcher m = TESTCASE.matcher(Files.readString(report));
            while (m.find()) {
                String name = m.group(1);
                String className = m.group(2);
                String simple = className.substring(Math.max(className.lastIndexOf('.'), className.lastIndexOf('$')) + 1);
                int paren = name.indexOf('(');
                String method = paren < 0 ? name : name.substring(0, paren);
                Matcher index = INVOCATION.matcher(name);
                int invocation = index.find() ? Integer.parseInt(index.group(1)) : 0;
                String body = m.group(4) == null ? "" : m.group(4);
                Result result = body.contains("<failure") || body.contains("<error") ? Result.FAILED
                        : body.contains("<skipped") ? Result.SKIPPED : Result.PASSED;
                runs.computeIfAbsent(simple + "#" + method, k -> new ArrayList<>()).add(new Run(invocation, result));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The runs of {@code SimpleClass#method} in this build, empty when it did not run. */
    List<Run> runs(String test) {
        return runs.getOrDefault(test, List.of());
    }

    /** Why {@code test} (every invocation, or only {@code invocation} when it is above 0) does not count as passed, or {@code null}. */
    String whyNotPassed(String test, int invocation) {
        List<Run> all = runs(test);
        List<Run> selected = invocation > 0 ? all.stream().filter(r -> r.invocation() == invocation).toList() : all;
        if (selected.isEmpty()) {
            return "did not run in this build";
        }
        for (Run run : selected) {
            if (run.result() != Result.PASSED) {
                return (run.invocation() > 0 ? "invocation " + run.invocation() + " " : "")
                        + run.result().name().toLowerCase();
            }
        }
        return null;
    }

    /** How many reports of this build were read. */
    int reports() {
        return reports;
    }

    /** Reports left over from an earlier build (ignored). */
    List<Path> stale() {
        return stale;
    }
}
