package org.jiwarp.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.AutoComplete;

/**
 * jiwarp's bash completion: picocli's {@link AutoComplete} script for the command as
 * {@link Jiwarp#commandLine()} builds it, every subcommand, option and value list included. The
 * build runs {@link #main} (cli/pom.xml, prepare-package) to write {@code
 * target/completion/jiwarp.bash} for the release tarball; {@code jiwarp generate-completion} prints
 * the same script.
 */
public final class CompletionScript {

    private CompletionScript() {
    }

    /** The script; {@code source} it in bash. */
    static String bash() {
        return AutoComplete.bash("jiwarp", Jiwarp.commandLine());
    }

    /** Writes the script to the file {@code args[0]}, creating its directory. */
    public static void main(String[] args) throws IOException {
        Path file = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(file.getParent());
        Files.writeString(file, bash(), StandardCharsets.UTF_8);
    }
}
