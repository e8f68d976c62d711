package org.jiwarp.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jiwarp.tools.Failures;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine;

/**
 * The {@code jiwarp} command.
 *
 * <p>Exit codes: 0 success, 1 runtime error (unreadable input, no iWARP traffic, a failed run),
 * 2 usage error, 3 the Java VM failed ({@link FatalErrors}); {@code check} has its own (0 clean,
 * 1 findings, 2 a file unreadable or without iWARP). {@code -V} and {@code --version}, on the command and on every subcommand
 * ({@code ping} has only {@code --version}: its {@code -V} validates, as rping's does), print one
 * line, {@code jiwarp VERSION}, the Maven project version the build wrote into {@code
 * version.properties}.
 */
@Command(name = "jiwarp", mixinStandardHelpOptions = true, versionProvider = Jiwarp.Version.class,
        description = "A pure-Java iWARP stack: MPA (RFC 5044, 6581), DDP (RFC 5041), RDMAP (RFC 5040).",
        subcommands = {BenchCommand.class, DecodeCommand.class, CheckCommand.class, PingCommand.class, NfsCommand.class, CommandLine.HelpCommand.class,
                org.jiwarp.cli.perftest.PerftestCommand.class, org.jiwarp.cli.ConformCommand.class,
                AutoComplete.GenerateCompletion.class})
public final class Jiwarp implements Runnable {

    /** Exit code for a runtime error. */
    public static final int EXIT_RUNTIME_ERROR = 1;
    /** Exit code for a usage error (picocli's default). */
    public static final int EXIT_USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: "
                + String.join(", ", spec.subcommands().keySet()));
    }

    private boolean debug;

    /** Inherited by every subcommand, so that it may follow the subcommand's name. */
    @Option(names = "--debug", scope = ScopeType.INHERIT,
            description = "On an error, also print the Java exception with its stack trace, and show log warnings.")
    void debug(boolean on) {
        debug = on;
    }

    /**
     * Builds the command line with jiwarp's conventions: a usage error is one line naming the
     * subcommand and pointing to its help (exit 2); a runtime error is one sentence in words
     * (exit 1), with the Java exception only under {@code --debug}.
     */
    public static CommandLine commandLine() {
        Jiwarp jiwarp = new Jiwarp();
        CommandLine commandLine = new CommandLine(jiwarp).setCaseInsensitiveEnumValuesAllowed(true);
        // A subcommand's own -V would print an empty line without a provider of its own.
        Version version = new Version();
        forEachCommand(commandLine, line -> line.getCommandSpec().versionProvider(version));
        commandLine.setParameterExceptionHandler((exception, args) -> {
            CommandLine line = exception.getCommandLine();
            String name = line.getCommandSpec().qualifiedName();
            String message = exception.getMessage() == null ? "invalid command line" : exception.getMessage();
            if (exception instanceof CommandLine.UnmatchedArgumentException unmatched && line.getParent() == null
                    && !unmatched.getUnmatched().isEmpty() && !unmatched.getUnmatched().get(0).startsWith("-")) {
                message = "unknown subcommand '" + unmatched.getUnmatched().get(0) + "'";
            }
            message = Character.toLowerCase(message.charAt(0)) + message.substring(1);
            line.getErr().println(name + ": " + message + " (see '" + name + " --help')");
            line.getErr().flush();
            return EXIT_USAGE;
        });
        commandLine.setExecutionExceptionHandler((exception, line, parseResult) -> {
            line.getErr().println(line.getCommandSpec().qualifiedName() + ": " + Failures.describe(exception));
            if (jiwarp.debug) {
                Failures.unwrap(exception).printStackTrace(line.getErr());
            }
            line.getErr().flush();
            return EXIT_RUNTIME_ERROR;
        });
        return commandLine;
    }

    /** Calls {@code action} on {@code line} and on each of its subcommands, theirs included. */
    static void forEachCommand(CommandLine line, java.util.function.Consumer<CommandLine> action) {
        action.accept(line);
        for (CommandLine sub : line.getSubcommands().values()) {
            forEachCommand(sub, action);
        }
    }

    /** {@code true} when {@code --debug} was given. */
    public static boolean debug(CommandLine line) {
        while (line.getParent() != null) {
            line = line.getParent();
        }
        return ((Jiwarp) line.getCommand()).debug;
    }

    /**
     * The system property sizing the per-thread batch that Netty hands a recycled object (a channel's
     * outbound entry, a pooled buffer) back to: 32 by default, and each 32 released beyond it in a row
     * cost a new queue chunk. A writev that completes 45 MSS-sized FPDUs releases 135 outbound entries at
     * once: with 32, 64 KiB Writes in MSS-sized FPDUs allocate about 9 heap octets per KiB, with 512
     * about 0.2 (SteadyStateAllocationTest). A setting of the user's own wins.
     */
    static final String RECYCLER_BATCH_PROPERTY = "io.netty.recycler.chunkSize";

    public static void main(String[] args) {
        FatalErrors.install();
        if (System.getProperty(RECYCLER_BATCH_PROPERTY) == null) {
            // Before any Netty class reads it.
            System.setProperty(RECYCLER_BATCH_PROPERTY, "512");
        }
        if (!Arrays.asList(args).contains("--debug")) {
            // Netty and the stack log through java.util.logging; their lines name Java classes.
            Logger.getLogger("").setLevel(Level.SEVERE);
        }
        System.exit(commandLine().execute(args));
    }

    /**
     * {@code jiwarp VERSION}: the project version Maven filtered into {@code version.properties}
     * (cli/src/main/resources-filtered), so that the pom, the jar and {@code -V} say the same.
     */
    static final class Version implements CommandLine.IVersionProvider {

        static final String RESOURCE = "version.properties";

        @Override
        public String[] getVersion() {
            return new String[] {"jiwarp " + projectVersion()};
        }

        /** The Maven project version, {@code 0.1.0} say. */
        static String projectVersion() {
            Properties properties = new Properties();
            try (InputStream in = Jiwarp.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException("jiwarp's " + RESOURCE + " is missing from its jar");
                }
                properties.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return properties.getProperty("version");
        }
    }
}
