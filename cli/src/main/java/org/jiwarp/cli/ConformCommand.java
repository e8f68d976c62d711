package org.jiwarp.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.jiwarp.conform.CaseResult;
import org.jiwarp.conform.ConformCase;
import org.jiwarp.conform.ConformCatalogue;
import org.jiwarp.conform.ConformReport;
import org.jiwarp.conform.ConformRunner;
import org.jiwarp.conform.Group;
import org.jiwarp.conform.KnownDeviations;
import org.jiwarp.conform.Program;
import org.jiwarp.conform.Role;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code jiwarp conform}: tests an iWARP implementation against the RFCs through rping's protocol
 * (or perftest's {@code -R} exchange, {@code --app}),
 * with the target's own stock tools: {@code rping -s} when it listens ({@code HOST:PORT}),
 * {@code rping -c} (in a loop: one connection per case) when it connects ({@code --listen PORT}).
 */
@Command(name = "conform", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Tests any iWARP implementation against RFC 5040, 5041, 5044 and 6581 through rping's "
                + "protocol: give HOST:PORT of an 'rping -s -P' on the target, or --listen PORT and run "
                + "'while :; do rping -c -a THIS_HOST -p PORT -C 1; done' there. With --app ib_write_bw or ib_read_bw "
                + "the target runs perftest with -R (in a loop) and the perftest group tests the region it registered.",
                "Exit status: 0 when every case passes or is a known deviation, 1 otherwise, 2 on a usage error."})
public final class ConformCommand implements Callable<Integer> {

    @Parameters(arity = "0..1", paramLabel = "HOST:PORT", description = "The target's rping server.")
    String target;

    @Option(names = "--listen", paramLabel = "PORT", description = "Listen on PORT for the target's rping client.")
    Integer listen;

    @Option(names = "--app", paramLabel = "TOOL", description = "What the target runs: rping (the default), "
            + "ib_write_bw or ib_read_bw (perftest with -R; in a loop, one run a case). The perftest group needs "
            + "ib_write_bw or ib_read_bw, the other groups rping.")
    String app = Program.RPING.command();

    @Option(names = "--size", paramLabel = "OCTETS", description = "perftest's message size on the target (-s; "
            + "default ${DEFAULT-VALUE}, perftest's own): with its page size it places the end of the region.")
    int messageSize = 65_536;

    @Option(names = "--group", split = ",", paramLabel = "GROUP", converter = GroupChoices.class,
            completionCandidates = GroupChoices.class,
            description = "Run only these groups: ${COMPLETION-CANDIDATES} (repeatable or comma-separated).")
    List<Group> groups = new ArrayList<>();

    /** What {@code --group} takes, as the report names the groups. */
    static final class GroupChoices extends org.jiwarp.cli.OptionChoices<Group> {
        GroupChoices() {
            super(Group.class, "MPA", "DDP", "RDMAP", "CRC", "SEGMENTATION", "CORRUPTION", "CRASH", "EXHAUSTION", "PERFTEST");
        }
    }

    @Option(names = "--case", split = ",", paramLabel = "NAME", description = "Run only these cases (see --list).")
    List<String> cases = new ArrayList<>();

    @Option(names = "--skip", split = ",", paramLabel = "NAME", description = "Leave these cases out (one that "
            + "wedges the target, say).")
    List<String> skip = new ArrayList<>();

    @Option(names = "--list", description = "List the cases (name, group, roles, RFC section, requirement) and exit.")
    boolean list;

    @Option(names = "--profile", paramLabel = "NAME",
            description = "Known deviations of an implementation: siw (Linux 6.1) or jiwarp.")
    String profile;

    @Option(names = "--known", paramLabel = "FILE", description = "Known deviations: lines 'CASE-NAME reason'.")
    Path knownFile;

    @Option(names = "--timeout", paramLabel = "MS", description = "How long to wait for the target's answer in "
            + "each step (default ${DEFAULT-VALUE} ms); a case hangs after four times that.")
    long timeoutMillis = 3000;

    @Option(names = "--wait", paramLabel = "MS", description = "How long to wait for a target that is down or "
            + "resetting before a case fails (default ${DEFAULT-VALUE} ms).")
    long waitMillis = 20_000;

    @Option(names = "--first-fpdu-pause", paramLabel = "MS", description = "Wait this long after the target's "
            + "MPA Reply before the first FPDU (default ${DEFAULT-VALUE} ms: Linux siw loses an FPDU right behind its "
            + "Reply).")
    long firstFpduPauseMillis = 300;

    @Option(names = "--restart-cmd", paramLabel = "CMD", description = "A shell command that restarts the target; "
            + "run when it stays away longer than --wait.")
    String restartCommand;

    @Option(names = "--fail-fast-unreachable", paramLabel = "N", description = "Stop the run when the target has "
            + "refused (or, with --listen, not made) N connections in a row, each after --wait and --restart-cmd "
            + "(default ${DEFAULT-VALUE}; 0: never stop).")
    int unreachableLimit = 3;

    @Option(names = "--json", description = "Print the results as JSON instead of the table.")
    boolean json;

    @Option(names = "--markdown", description = "Print the results as a Markdown table instead of the terminal table.")
    boolean markdown;

    @Option(names = "--progress", description = "With --json or --markdown, print each case's line on standard error "
            + "as it finishes (by default only on a terminal).")
    boolean progressLines;

    @Option(names = "--junit", paramLabel = "FILE", description = "Also write the results as JUnit XML to FILE.")
    Path junit;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandLine line = spec.commandLine();
        PrintWriter out = line.getOut();
        if (list) {
            for (ConformCase c : ConformCatalogue.all()) {
                List<String> tools = new ArrayList<>();
                c.programs().forEach(p -> tools.add(p.command()));
                out.printf("%-44s %-13s %-10s %-22s %s: %s%n", c.name(), c.group().name().toLowerCase(),
                        c.role() == null ? "both" : c.role() == Role.TARGET_LISTENS ? "listens" : "connects",
                        String.join(",", tools), c.section(), c.requirement());
            }
            out.flush();
            return 0;
        }
        if ((target == null) == (listen == null)) {
            throw new CommandLine.ParameterException(line, "give exactly one of HOST:PORT (the target listens) and "
                    + "--listen PORT (the target connects)");
        }
        if (json && markdown) {
            throw new CommandLine.ParameterException(line, "give at most one of --json and --markdown");
        }
        if (timeoutMillis <= 0 || waitMillis <= 0 || firstFpduPauseMillis < 0) {
            throw new CommandLine.ParameterException(line, "--timeout and --wait must be positive, --first-fpdu-pause "
                    + "not negative");
        }
        InetSocketAddress address = target == null ? null : parseTarget(line, target);
        if (listen != null && (listen < 1 || listen > 65535)) {
            throw new CommandLine.ParameterException(line, "invalid port " + listen + " (valid range is 1 to 65535)");
        }
        Role role = address != null ? Role.TARGET_LISTENS : Role.TARGET_CONNECTS;
        Program program = Program.of(app);
        if (program == null) {
            throw new CommandLine.ParameterException(line, "unknown --app '" + app + "' (rping, ib_write_bw or "
                    + "ib_read_bw)");
        }
        if (messageSize < 1) {
            throw new CommandLine.ParameterException(line, "--size must be positive");
        }
        if (unreachableLimit < 0) {
            throw new CommandLine.ParameterException(line, "--fail-fast-unreachable must be 0 (never stop) or more");
        }
        List<ConformCase> selected = select(line, role, program);
        KnownDeviations known = known(line);

        PrintWriter err = line.getErr();
        boolean table = !json && !markdown;
        boolean progress = !table && (progressLines || System.console() != null);
        String where = address != null ? target : "connections on port " + listen;
        List<String> restart = restartCommand == null ? null : List.of("sh", "-c", restartCommand);
        try (ServerSocket server = listen == null ? null : new ServerSocket(listen, 4, (InetAddress) null);
                ConformRunner runner = new ConformRunner(address, server, timeoutMillis, waitMillis, firstFpduPauseMillis,
                        restart, program, messageSize,
                        text -> print(err, "jiwarp conform: " + text))) {
            runner.debug(org.jiwarp.cli.Jiwarp.debug(line)).stopWhenUnreachable(unreachableLimit);
            if (table) {
                print(out, "jiwarp conform: " + selected.size() + " cases against " + where + " ("
                        + ConformReport.roleName(role, program) + ")");
            }
            List<CaseResult> results = runner.run(selected, known, r -> {
                if (table) {
                    print(out, ConformReport.line(r) + "\n" + ConformReport.detail(r));
                } else if (progress) {
                    print(err, ConformReport.line(r));
                }
            });
            List<ConformCase> notRun = selected.subList(results.size(), selected.size());
            if (runner.stopReason() != null) {
                print(err, "jiwarp conform: stopped after " + results.size() + " of " + selected.size() + " cases: "
                        + runner.stopReason() + "; --fail-fast-unreachable 0 runs every case");
            }
            ConformReport report = new ConformReport(where, role, program, results, notRun, runner.stopReason());
            if (table) {
                print(out, report.summary());
            } else {
                print(out, json ? report.json() : report.markdown());
            }
            if (junit != null) {
                writeAtomically(junit, report.junit());
            }
            return report.exitCode();
        }
    }

    private static InetSocketAddress parseTarget(CommandLine line, String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new CommandLine.ParameterException(line, "the target '" + text + "' is not HOST:PORT");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new CommandLine.ParameterException(line, "the target's port '" + text.substring(colon + 1)
                    + "' is not a number");
        }
        if (port < 1 || port > 65535) {
            throw new CommandLine.ParameterException(line, "invalid port " + port + " (valid range is 1 to 65535)");
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new CommandLine.ParameterException(line, "unknown host " + host);
        }
        return address;
    }

    private List<ConformCase> select(CommandLine line, Role role, Program program) {
        Set<String> names = ConformCatalogue.names();
        for (String name : skip) {
            if (!names.contains(name)) {
                throw new CommandLine.ParameterException(line, "unknown case '" + name + "' (see --list)");
            }
        }
        for (String name : cases) {
            if (!names.contains(name)) {
                throw new CommandLine.ParameterException(line, "unknown case '" + name + "' (see --list)");
            }
        }
        Set<Group> wanted = groups.isEmpty() ? EnumSet.allOf(Group.class) : EnumSet.copyOf(groups);
        List<ConformCase> selected = new ArrayList<>();
        ConformCase otherRole = null;
        ConformCase otherProgram = null;
        for (ConformCase c : ConformCatalogue.all()) {
            boolean named = (cases.isEmpty() || cases.contains(c.name())) && !skip.contains(c.name());
            if (named && wanted.contains(c.group()) && !c.runsWith(program)) {
                otherProgram = otherProgram == null ? c : otherProgram;
            } else if (named && wanted.contains(c.group())) {
                if (c.runsIn(role)) {
                    selected.add(c);
                } else if (cases.contains(c.name()) && otherRole == null) {
                    otherRole = c;
                }
            }
        }
        // Named cases of the other role are left out (one list serves both roles); alone, they are an error.
        if (selected.isEmpty() && otherRole != null) {
            throw new CommandLine.ParameterException(line, "case '" + otherRole.name() + "' needs the target to "
                    + (otherRole.role() == Role.TARGET_LISTENS ? "listen (HOST:PORT)" : "connect (--listen PORT)"));
        }
        if (selected.isEmpty() && otherProgram != null) {
            List<String> tools = new ArrayList<>();
            otherProgram.programs().forEach(p -> tools.add(p.command()));
            throw new CommandLine.ParameterException(line, "case '" + otherProgram.name() + "' needs the target to run "
                    + String.join(" or ", tools) + " (--app), not " + program.command());
        }
        if (selected.isEmpty()) {
            throw new CommandLine.ParameterException(line, "no case matches the --group and --case given");
        }
        return selected;
    }

    private KnownDeviations known(CommandLine line) throws IOException {
        KnownDeviations known = KnownDeviations.none();
        if (profile != null) {
            KnownDeviations p = KnownDeviations.profile(profile);
            if (p == null) {
                throw new CommandLine.ParameterException(line, "unknown profile '" + profile + "' (siw or jiwarp)");
            }
            known = known.and(p);
        }
        if (knownFile != null) {
            if (!Files.isReadable(knownFile)) {
                throw new CommandLine.ParameterException(line, "cannot read the known deviations file " + knownFile);
            }
            try {
                known = known.and(KnownDeviations.read(knownFile));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(line, e.getMessage());
            }
        }
        Set<String> names = ConformCatalogue.names();
        for (String name : known.names()) {
            if (!name.equals(KnownDeviations.TERMINATE_ENCODING) && !names.contains(name)) {
                throw new CommandLine.ParameterException(line, "the known deviations name an unknown case '" + name
                        + "'");
            }
        }
        return known;
    }

    /** Writes {@code text} to a temporary file beside {@code file}, then moves it in place (an interrupted run leaves no half file). */
    private static void writeAtomically(Path file, String text) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Path temporary = Files.createTempFile(parent, ".conform", ".xml");
        Files.writeString(temporary, text, StandardCharsets.UTF_8);
        // A report is for others to read (CI, a colleague): rw-r--r--, not the temporary file's 0600.
        if (Files.getFileAttributeView(temporary, java.nio.file.attribute.PosixFileAttributeView.class) != null) {
            Files.setPosixFilePermissions(temporary, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        }
        Files.move(temporary, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static void print(PrintWriter writer, String text) {
        synchronized (writer) {
            writer.println(text);
            writer.flush();
        }
    }
}
