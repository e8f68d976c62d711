package org.jiwarp.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapFormatException;

/**
 * Reads the capture files of {@code jiwarp decode} and {@code jiwarp check}: classic pcap, pcapng,
 * either gzip-compressed, or {@code -} for standard input. A file that cannot be read is one
 * sentence on standard error and {@code null}.
 */
final class CaptureInput {

    /** The name that means standard input. */
    static final String STDIN = "-";

    private CaptureInput() {
    }

    /** The name a file is called by in messages. */
    static String name(Path file) {
        return STDIN.equals(file.toString()) ? "standard input" : file.toString();
    }

    static PcapFile read(Path file, InputStream stdin, String command, PrintWriter err) {
        try {
            if (STDIN.equals(file.toString())) {
                return PcapFile.read(stdin);
            }
            if (Files.isDirectory(file)) {
                err.println("jiwarp " + command + ": " + file + " is a directory, not a capture file");
                return null;
            }
            return PcapFile.read(file);
        } catch (PcapFormatException e) {
            String message = e.getMessage();
            err.println("jiwarp " + command + ": " + (STDIN.equals(file.toString()) ? "standard input: " : "")
                    + message);
            return null;
        } catch (NoSuchFileException e) {
            err.println("jiwarp " + command + ": cannot read " + file + ": it does not exist");
            return null;
        } catch (IOException e) {
            err.println("jiwarp " + command + ": cannot read " + name(file)
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
            return null;
        }
    }
}
