package org.jiwarp.rnic.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's verbs example, compiled and run: README.md shows {@link ReadmeExample} from its first
 * import to its end between its {@code verbs-example} markers, character for character (this test
 * compares them), in a package of its own so that every import a user needs is in it; what it prints
 * is checked. The Maven coordinates above it name this build's version.
 */
class ReadmeExampleTest {

    private static final Path README = Path.of("../README.md");

    @Test
    void theReadmeExampleIsThisProgramAndRuns() throws Exception {
        String program = Files.readString(Path.of("src/test/java/org/jiwarp/rnic/example/ReadmeExample.java"));
        assertEquals(program.substring(program.indexOf("\nimport ") + 1).stripTrailing(),
                block("<!-- verbs-example -->", "<!-- /verbs-example -->"),
                "README.md's verbs example and ReadmeExample.java must be the same program");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            ReadmeExample.main(new String[0]);
        } finally {
            System.setOut(out);
        }
        assertEquals(List.of(
                "10 RDMA_WRITE SUCCESS",
                "11 RDMA_READ SUCCESS",
                "12 SEND SUCCESS",
                "read back: written by RDMA Write",
                "server received: done, its region holds: written by RDMA Write",
                "ERROR ERROR"), printed.toString(StandardCharsets.UTF_8).lines().toList());
    }

    @Test
    void theReadmeCoordinatesNameThisBuild() throws IOException {
        Matcher parent = Pattern.compile("<artifactId>jiwarp-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(Path.of("pom.xml")));
        assertTrue(parent.find(), "rnic/pom.xml names no parent version");
        String coordinates = block("<!-- verbs-coordinates -->", "<!-- /verbs-coordinates -->");
        assertTrue(coordinates.contains("<artifactId>jiwarp-rnic</artifactId>")
                        && coordinates.contains("<version>" + parent.group(1) + "</version>"),
                "README.md's Maven coordinates must name jiwarp-rnic " + parent.group(1) + ", not:\n" + coordinates);
    }

    /** README.md's lines between two marker lines, without the code fence. */
    private static String block(String begin, String end) throws IOException {
        List<String> lines = Files.readAllLines(README);
        int from = lines.indexOf(begin);
        int to = lines.indexOf(end);
        if (from < 0 || to < from) {
            throw new AssertionError("README.md has no block between " + begin + " and " + end);
        }
        return String.join("\n", lines.subList(from + 1, to).stream().filter(l -> !l.startsWith("```")).toList())
                .stripTrailing();
    }
}
