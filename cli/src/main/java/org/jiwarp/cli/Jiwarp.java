package org.jiwarp.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code jiwarp} command.
 *
 * <p>Exit codes: 0 success, 1 runtime error (unreadable input, no iWARP traffic, a failed run),
 * 2 usage error.
 */
@Command(name = "jiwarp", mixinStandardHelpOptions = true, versionProvider = Jiwarp.Version.class,
        description = "A pure-Java iWARP stack: MPA (RFC 5044, 6581), DDP (RFC 5041), RDMAP (RFC 5040).",
        subcommands = {BenchCommand.class, DecodeCommand.class, CheckCommand.class, PingCommand.class, CommandLine.HelpCommand.class,
                org.jiwarp.cli.perftest.PerftestCommand.class})
public final class Jiwarp implements Runnable {

    /** Exit code for a runtime error. */
    public static final int EXIT_RUNTIME_ERROR = 1;
    /** Exit code for a usage error (picocli's default). */
    public static final int EXIT_USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand");
    }

    /** Builds the command line with jiwarp's conventions. */
    public static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new Jiwarp()).setCaseInsensitiveEnumValuesAllowed(true);
        commandLine.setExecutionExceptionHandler((exception, line, parseResult) -> {
            line.getErr().println("jiwarp: " + exception.getMessage());
            return EXIT_RUNTIME_ERROR;
        });
        return commandLine;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Jiwarp.class.getPackage().getImplementationVersion();
            return new String[] {"jiwarp " + (version == null ? "(development build)" : version)};
        }
    }
}
