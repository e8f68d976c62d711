package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code -V} and {@code --version} on {@code jiwarp} and on every subcommand, nested ones included,
 * print {@code jiwarp VERSION} with the version Maven builds (cli/pom.xml hands the test
 * {@code project.version} as {@code jiwarp.projectVersion}) and exit 0. Only {@code ping} keeps
 * {@code -V} for itself: rping's validate flag.
 */
class VersionTest {

    /** Commands whose {@code -V} is an option of their own, not the version. */
    private static final Set<String> OWN_DASH_V = Set.of("jiwarp ping");

    /** The built-in help command, which prints other commands' help and takes no option but -h. */
    private static final Set<String> NO_VERSION = Set.of("jiwarp help");

    private static String expected() {
        String version = System.getProperty("jiwarp.projectVersion");
        assertNotNull(version, "surefire sets jiwarp.projectVersion from the pom (cli/pom.xml)");
        assertFalse(version.isBlank() || version.contains("${"), version);
        return "jiwarp " + version + System.lineSeparator();
    }

    @Test
    void everyCommandPrintsTheMavenProjectVersion() {
        List<String> checked = new ArrayList<>();
        Jiwarp.forEachCommand(Jiwarp.commandLine(), line -> {
            String name = line.getCommandSpec().qualifiedName();
            if (NO_VERSION.contains(name)) {
                return;
            }
            List<String> path = new ArrayList<>(List.of(name.split(" ")));
            path.remove(0);
            CommandLine.Model.OptionSpec dashV = line.getCommandSpec().findOption("-V");
            assertNotNull(line.getCommandSpec().findOption("--version"), name + " has no --version");
            assertTrue(line.getCommandSpec().findOption("--version").versionHelp(), name);
            if (OWN_DASH_V.contains(name)) {
                assertFalse(dashV.versionHelp(), name + "'s -V is its own option");
            } else {
                assertNotNull(dashV, name + " has no -V");
                assertTrue(dashV.versionHelp(), name + "'s -V is not the version");
            }
            for (String flag : OWN_DASH_V.contains(name) ? List.of("--version") : List.of("-V", "--version")) {
                List<String> args = new ArrayList<>(path);
                args.add(flag);
                DecodeCommandTest.Run run = DecodeCommandTest.jiwarp(args.toArray());
                assertEquals(0, run.exit(), name + " " + flag + ": " + run.err());
                assertEquals(expected(), run.out(), name + " " + flag);
                assertEquals("", run.err(), name + " " + flag);
                checked.add(name + " " + flag);
            }
        });
        // Every subcommand jiwarp has today, so that a renamed or dropped one is noticed here.
        for (String command : List.of("jiwarp", "jiwarp bench", "jiwarp decode", "jiwarp check", "jiwarp ping",
                "jiwarp nfs", "jiwarp perftest", "jiwarp conform", "jiwarp generate-completion")) {
            assertTrue(checked.contains(command + " --version"), command + " was not checked: " + checked);
        }
    }
}
