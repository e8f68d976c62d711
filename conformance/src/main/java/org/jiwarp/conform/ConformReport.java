package org.jiwarp.conform;

import java.util.List;

/**
 * A conform run's results as a terminal table with a summary line, JSON, JUnit XML (one test case
 * per case with its time and what the target did as {@code system-out}, a failure per FAIL, KNOWN
 * and cases not run as skipped with the reason) and a Markdown scorecard. Every row says what the
 * target did, PASS included.
 */
public final class ConformReport {

    private final String target;
    private final Role role;
    private final Program program;
    private final List<CaseResult> results;
    private final List<ConformCase> notRun;
    private final String stopReason;

    public ConformReport(String target, Role role, List<CaseResult> results) {
        this(target, role, Program.RPING, results);
    }

    public ConformReport(String target, Role role, Program program, List<CaseResult> results) {
        this(target, role, program, results, List.of(), null);
    }

    /**
     * @param notRun the cases left when the run stopped early
     * @param stopReason why it stopped, or {@code null} when it ran every case
     */
    public ConformReport(String target, Role role, Program program, List<CaseResult> results,
            List<ConformCase> notRun, String stopReason) {
        this.target = target;
        this.role = role;
        this.program = program;
        this.results = results;
        this.notRun = notRun;
        this.stopReason = stopReason;
    }

    public long count(Verdict verdict) {
        return results.stream().filter(r -> r.verdict() == verdict).count();
    }

    /** 0 when every case passed or is KNOWN, 1 otherwise. */
    public int exitCode() {
        return count(Verdict.FAIL) == 0 ? 0 : 1;
    }

    /** "112 cases: 104 PASS, 6 KNOWN, 2 FAIL" (and how many were not run, and why). */
    public String summary() {
        String summary = String.format("%d cases against %s (%s): %d PASS, %d KNOWN, %d FAIL", results.size(), target,
                roleName(role, program), count(Verdict.PASS), count(Verdict.KNOWN), count(Verdict.FAIL));
        return notRun.isEmpty() ? summary : summary + ", " + notRun.size() + " not run: the run stopped because "
                + stopReason;
    }

    public static String roleName(Role role, Program program) {
        return (role == Role.TARGET_LISTENS ? "target listens, " : "target connects, ") + program.command()
                + (role == Role.TARGET_LISTENS ? " server" : " client");
    }

    /** One line per case for a terminal, as it comes. */
    public static String line(CaseResult r) {
        return String.format("%-6s %-13s %-44s %s", r.verdict(), r.testCase().group().name().toLowerCase(),
                r.name(), r.testCase().section());
    }

    /** The detail lines under a case: what the target did, and for one that did not pass what the RFC requires. */
    public static String detail(CaseResult r) {
        StringBuilder s = new StringBuilder();
        if (r.verdict() != Verdict.PASS) {
            s.append("         requires: ").append(r.testCase().requirement()).append('\n');
        }
        s.append("         target:   ").append(r.observed());
        if (r.known() != null) {
            s.append("\n         known:    ").append(r.known());
        }
        return s.toString();
    }

    /** The whole table: every case with what the target did, what was required of those that did not pass, and the summary line. */
    public String table() {
        StringBuilder s = new StringBuilder();
        for (CaseResult r : results) {
            s.append(line(r)).append('\n').append(detail(r)).append('\n');
        }
        return s.append(summary()).append('\n').toString();
    }

    public String json() {
        StringBuilder s = new StringBuilder("{\n  \"target\": ").append(string(target));
        s.append(",\n  \"role\": ").append(string(role.name().toLowerCase().replace('_', '-')));
        s.append(",\n  \"pass\": ").append(count(Verdict.PASS)).append(", \"known\": ").append(count(Verdict.KNOWN))
                .append(", \"fail\": ").append(count(Verdict.FAIL)).append(", \"notRun\": ").append(notRun.size());
        s.append(",\n  \"stopped\": ").append(stopReason == null ? "null" : string(stopReason));
        s.append(",\n  \"cases\": [");
        for (int i = 0; i < results.size(); i++) {
            CaseResult r = results.get(i);
            s.append(i == 0 ? "\n    {" : ",\n    {");
            s.append("\"name\": ").append(string(r.name()));
            s.append(", \"group\": ").append(string(r.testCase().group().name().toLowerCase()));
            s.append(", \"section\": ").append(string(r.testCase().section()));
            s.append(", \"requires\": ").append(string(r.testCase().requirement()));
            s.append(", \"verdict\": ").append(string(r.verdict().name()));
            s.append(", \"target\": ").append(string(r.observed()));
            s.append(", \"known\": ").append(r.known() == null ? "null" : string(r.known()));
            s.append(", \"hung\": ").append(r.hung());
            s.append(", \"millis\": ").append(r.millis()).append('}');
        }
        return s.append("\n  ]\n}\n").toString();
    }

    public String junit() {
        StringBuilder s = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        long millis = results.stream().mapToLong(CaseResult::millis).sum();
        s.append(String.format("<testsuite name=\"jiwarp conform %s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" "
                + "errors=\"0\" time=\"%s\">%n", xml(target), results.size() + notRun.size(), count(Verdict.FAIL),
                count(Verdict.KNOWN) + notRun.size(), seconds(millis)));
        for (CaseResult r : results) {
            s.append(String.format("  <testcase classname=\"conform.%s\" name=\"%s\" time=\"%s\">%n",
                    r.testCase().group().name().toLowerCase(), xml(r.name()), seconds(r.millis())));
            if (r.verdict() == Verdict.FAIL) {
                s.append(String.format("    <failure message=\"%s\">%s: %s%n%s</failure>%n",
                        xml(r.testCase().section() + " requires: " + r.testCase().requirement()),
                        xml(r.testCase().section()), xml(r.testCase().requirement()), xml("target: " + r.observed())));
            } else if (r.verdict() == Verdict.KNOWN) {
                s.append(String.format("    <skipped message=\"%s\"/>%n", xml("known deviation: " + r.known())));
            }
            s.append(String.format("    <system-out>%s</system-out>%n", xml("target: " + r.observed())));
            s.append("  </testcase>\n");
        }
        for (ConformCase c : notRun) {
            s.append(String.format("  <testcase classname=\"conform.%s\" name=\"%s\" time=\"0.000\">%n"
                    + "    <skipped message=\"%s\"/>%n  </testcase>%n", c.group().name().toLowerCase(), xml(c.name()),
                    xml("not run: the run stopped because " + stopReason)));
        }
        return s.append("</testsuite>\n").toString();
    }

    private static String seconds(long millis) {
        return String.format(java.util.Locale.ROOT, "%d.%03d", millis / 1000, millis % 1000);
    }

    public String markdown() {
        StringBuilder s = new StringBuilder();
        s.append("| case | group | RFC | verdict | what the target did |\n|---|---|---|---|---|\n");
        for (CaseResult r : results) {
            String what = r.observed() + (r.known() != null ? " *Known: " + r.known() + "*" : "");
            s.append(String.format("| `%s` | %s | %s | %s | %s |%n", r.name(),
                    r.testCase().group().name().toLowerCase(), md(r.testCase().section()),
                    r.verdict() == Verdict.PASS ? "PASS" : "**" + r.verdict() + "**", md(what)));
        }
        return s.append('\n').append(summary()).append('\n').toString();
    }

    private static String md(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    private static String xml(String text) {
        StringBuilder s = new StringBuilder();
        for (char c : text.toCharArray()) {
            switch (c) {
                case '<' -> s.append("&lt;");
                case '>' -> s.append("&gt;");
                case '&' -> s.append("&amp;");
                case '"' -> s.append("&quot;");
                default -> s.append(c < 0x20 && c != '\n' ? ' ' : c);
            }
        }
        return s.toString();
    }

    private static String string(String text) {
        StringBuilder s = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> s.append("\\\"");
                case '\\' -> s.append("\\\\");
                case '\n' -> s.append("\\n");
                default -> {
                    if (c < 0x20) {
                        s.append(String.format("\\u%04x", (int) c));
                    } else {
                        s.append(c);
                    }
                }
            }
        }
        return s.append('"').toString();
    }
}
