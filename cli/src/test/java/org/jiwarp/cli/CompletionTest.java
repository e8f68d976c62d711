package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bash completion the release ships (completion/jiwarp.bash, written by {@link
 * CompletionScript} at build time) and {@code jiwarp generate-completion} prints: it parses
 * ({@code bash -n}), has a function for every subcommand, nested ones included, and completes
 * subcommand names and an enum option's values in a real bash.
 */
class CompletionTest {

    @TempDir
    Path temp;

    @Test
    void theScriptNamesEverySubcommandAndParses() throws Exception {
        String script = CompletionScript.bash();
        Jiwarp.forEachCommand(Jiwarp.commandLine(), line -> {
            String function = "function _picocli_" + line.getCommandSpec().qualifiedName("_").replace("-", "") + "()";
            assertTrue(script.contains(function), function + " is missing");
        });
        Path file = temp.resolve("jiwarp.bash");
        Files.writeString(file, script, StandardCharsets.UTF_8);
        assertEquals("", bash("-n", file.toString()));
    }

    @Test
    void generateCompletionPrintsTheSameScript() {
        DecodeCommandTest.Run run = DecodeCommandTest.jiwarp("generate-completion");
        assertEquals(0, run.exit(), run.err());
        assertEquals(CompletionScript.bash(), run.out().stripTrailing() + "\n");
    }

    @Test
    void bashCompletesSubcommandsAndOptionValues() throws Exception {
        Path file = temp.resolve("jiwarp.bash");
        CompletionScript.main(new String[] {file.toString()});
        assertEquals("bench", complete(file, "jiwarp", "ben"));
        assertEquals("perftest ping", complete(file, "jiwarp", "p"));
        assertEquals("atomic compare_swap fetch_add read send write", complete(file, "jiwarp", "bench", "--op", ""));
        assertEquals("write", complete(file, "jiwarp", "perftest", "--test", "w"));
    }

    /** What bash offers for the last of {@code words}, as the completion function sets COMPREPLY. */
    private String complete(Path script, String... words) throws Exception {
        StringBuilder array = new StringBuilder();
        for (String word : words) {
            array.append(" '").append(word).append('\'');
        }
        String line = String.join(" ", words);
        // compopt works only inside a completion bash itself started: a no-op here.
        return bash("-c", "compopt() { :; }; source '" + script + "'; COMP_WORDS=(" + array + "); COMP_CWORD=" + (words.length - 1)
                + "; COMP_LINE='" + line + "'; COMP_POINT=" + line.length() + "; _complete_jiwarp; "
                + "printf '%s\\n' \"${COMPREPLY[@]}\" | sort -u | paste -sd ' ' -").strip();
    }

    /** Runs bash with {@code args}; its standard output, after checking it exited 0 with nothing on standard error. */
    private String bash(String... args) throws Exception {
        Path out = Files.createTempFile(temp, "out", "");
        Path err = Files.createTempFile(temp, "err", "");
        List<String> command = new java.util.ArrayList<>(List.of("bash"));
        command.addAll(List.of(args));
        // Output to files, not pipes: reading a pipe would wait for bash without a deadline.
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("bash did not finish within 60 s");
        }
        String error = Files.readString(err, StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), error);
        assertEquals("", error);
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}
