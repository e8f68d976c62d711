package org.jiwarp.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.jiwarp.capture.pcap.CaptureReader;
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

    /** Reads a whole capture into memory (for what needs every frame at once), or {@code null}. */
    static PcapFile read(Path file, InputStream stdin, String command, PrintWriter err) {
        try (CaptureReader reader = open(file, stdin, command, err)) {
            return reader == null ? null : PcapFile.read(reader);
        } catch (IOException e) {
            failed(file, command, err, e);
            return null;
        }
    }

    /**
     * Opens a capture to be read a record at a time, or says why not (one sentence on
     * {@code err}) and returns {@code null}. Standard input is not closed with the reader.
     */
    static CaptureReader open(Path file, InputStream stdin, String command, PrintWriter err) {
        try {
            if (STDIN.equals(file.toString())) {
                return CaptureReader.open(new java.io.FilterInputStream(stdin) {
                    @Override
                    public void close() {
                        // standard input stays open
                    }
                });
            }
            if (Files.isDirectory(file)) {
                err.println("jiwarp " + command + ": " + file + " is a directory, not a capture file");
                return null;
            }
            return CaptureReader.open(file);
        } catch (IOException e) {
            failed(file, command, err, e);
            return null;
        }
    }

    /** Says, in one sentence on {@code err}, why {@code file} could not be read. */
    static void failed(Path file, String command, PrintWriter err, IOException failure) {
        if (failure instanceof PcapFormatException) {
            // The reader's message names the file already; standard input has no name of its own.
            err.println("jiwarp " + command + ": " + (STDIN.equals(file.toString()) ? "standard input: " : "")
                    + failure.getMessage());
        } else if (failure instanceof NoSuchFileException) {
            err.println("jiwarp " + command + ": cannot read " + file + ": it does not exist");
        } else {
            err.println("jiwarp " + command + ": cannot read " + name(file)
                    + (failure.getMessage() == null ? "" : ": " + failure.getMessage()));
        }
    }
}
