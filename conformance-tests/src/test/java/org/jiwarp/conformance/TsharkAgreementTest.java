package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * jiwarp's decoder agrees with tshark field by field, frame by frame, on captures nobody in this
 * project wrote: the Wireshark wiki's iWARP samples (IBM Zurich, MPA rev 1, CRC and marker
 * variants) and real Linux soft-iWARP traffic. A mismatch names the file, frame and field.
 *
 * <p>Skipped, with a message, when tshark is not installed or {@code $JIWARP_EXTERNAL_PCAPS} is
 * unset; {@code .ci/run} installs tshark and sets the variable, so in CI it runs.
 */
class TsharkAgreementTest {

    @TestFactory
    Stream<DynamicTest> wiresharkWikiCaptures() throws IOException {
        return captures("wireshark-wiki");
    }

    @TestFactory
    Stream<DynamicTest> linuxSiwCaptures() throws IOException {
        return captures("siw");
    }

    private static Stream<DynamicTest> captures(String folder) throws IOException {
        Path tshark = Tshark.required();
        Path dir = Prerequisites.externalPcaps().resolve(folder);
        Prerequisites.require(Files.isDirectory(dir), dir + " does not exist");
        List<Path> files = ExternalPcaps.pcaps(dir);
        assertFalse(files.isEmpty(), "no captures in " + dir);
        List<DynamicTest> tests = new ArrayList<>();
        for (Path file : files) {
            tests.add(DynamicTest.dynamicTest(file.getFileName().toString(), () -> {
                List<String> mismatches = FieldComparison.mismatches(tshark, file);
                assertEquals(List.of(), mismatches, mismatches.size() + " mismatch(es) with tshark in " + file);
            }));
        }
        return tests.stream();
    }
}
