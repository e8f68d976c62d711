package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/jiwarp} called through a chain of symlinks, as users install it
 * ({@code ln -s .../bin/jiwarp ~/bin/jiwarp}): it finds the jar next to the real script. With the
 * jar built ({@code mvn package}) it runs {@code jiwarp --version}; without it, its message names
 * the jar's real place, not the link's.
 */
class LauncherTest {

    private static final Path LAUNCHER = Path.of("..", "bin", "jiwarp").toAbsolutePath().normalize();
    private static final Path JAR = Path.of("target", "jiwarp.jar").toAbsolutePath().normalize();

    @TempDir
    Path temp;

    @Test
    void worksThroughARelativeSymlinkToASymlink() throws Exception {
        Path first = Files.createDirectories(temp.resolve("a")).resolve("jiwarp");
        Files.createSymbolicLink(first, LAUNCHER);
        Path second = Files.createDirectories(temp.resolve("b")).resolve("jw");
        Files.createSymbolicLink(second, Path.of("..", "a", "jiwarp"));

        // Output to files, not pipes: reading a pipe would wait for the launcher without a deadline.
        Path outFile = temp.resolve("out");
        Path errFile = temp.resolve("err");
        Process process = new ProcessBuilder("bash", second.toString(), "--version")
                .directory(temp.toFile()).redirectOutput(outFile.toFile()).redirectError(errFile.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the launcher did not finish within 60 s");
        }
        String out = Files.readString(outFile, StandardCharsets.UTF_8);
        String err = Files.readString(errFile, StandardCharsets.UTF_8);
        if (Files.isRegularFile(JAR)) {
            assertEquals(0, process.exitValue(), err);
            assertTrue(out.startsWith("jiwarp "), out);
        } else {
            assertEquals(1, process.exitValue(), err);
            assertEquals("jiwarp: " + JAR + " not found; build it with: mvn -q -DskipTests package\n", err);
        }
    }

}
