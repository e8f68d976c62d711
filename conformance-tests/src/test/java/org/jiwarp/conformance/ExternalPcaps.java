package org.jiwarp.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Where the reference captures from outside the project live: {@code $JIWARP_EXTERNAL_PCAPS}
 * (surefire passes it on as {@code -Djiwarp.externalPcaps}; {@link org.jiwarp.testing.Prerequisites#externalPcaps()}
 * finds it). They are never copied into the project.
 */
final class ExternalPcaps {

    private ExternalPcaps() {
    }

    /** The {@code .pcap} files of a sub-folder, sorted. */
    static List<Path> pcaps(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(p -> p.toString().endsWith(".pcap")).sorted().collect(Collectors.toList());
        }
    }
}
