package org.jiwarp.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jiwarp.capture.check.CaptureChecker;
import org.jiwarp.capture.check.Finding;
import org.jiwarp.capture.decode.StreamingDecode;
import org.jiwarp.capture.pcap.CaptureReader;
import org.jiwarp.capture.pcap.PcapRecord;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp check FILE...}: the passive RFC checker. One line per finding (frames, connection,
 * rule, RFC section, one sentence, and the known quirk it is, if any), or {@code --json}.
 *
 * <p>Exit status: 0 nothing found, 1 findings, 2 an input could not be read or holds no iWARP
 * connection, so that there was nothing to check (usage errors are 2 as well, as picocli has it).
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Check the iWARP traffic of pcap or pcapng files against RFC 5044, 5041, 5040 and 6581; "
                + "exit 0 when clean, 1 with findings, 2 when a file cannot be read or holds no iWARP connection.")
final class CheckCommand implements Callable<Integer> {

    static final int EXIT_FINDINGS = 1;
    /** An input could not be read, or held no iWARP connection: something went unchecked. */
    static final int EXIT_UNREADABLE = 2;

    @Parameters(index = "0..*", arity = "1..*", paramLabel = "FILE",
            description = "A pcap or pcapng capture, possibly gzip-compressed; - for standard input.")
    List<Path> files = new ArrayList<>();

    @Option(names = "--json", description = "Print the findings as a JSON array.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        boolean unreadable = false;
        boolean found = false;
        StringBuilder jsonOut = new StringBuilder("[");
        boolean firstJson = true;
        for (Path file : files) {
            String name = CaptureInput.name(file);
            List<Finding> findings;
            try (CaptureReader reader = CaptureInput.open(file, System.in, "check", err)) {
                if (reader == null) {
                    unreadable = true;
                    continue;
                }
                // The PDUs go to the checker as they are decoded; neither the capture nor its PDUs are kept.
                CaptureChecker checker = new CaptureChecker();
                long[] pdus = {0};
                StreamingDecode decode = new StreamingDecode(pdu -> {
                    pdus[0]++;
                    checker.add(pdu);
                }, StreamingDecode.DEFAULT_WINDOW);
                for (PcapRecord record = reader.next(); record != null; record = reader.next()) {
                    decode.add(record, reader.linkType(record));
                }
                decode.finish();
                if (reader.warning() != null) {
                    err.println("note: " + name + ": " + reader.warning());
                }
                if (decode.iwarpConversations() == 0) {
                    err.println("jiwarp check: " + noIwarp(name, decode.tcpConversations()));
                    unreadable = true;
                    continue;
                }
                findings = checker.findings();
                if (!json && findings.isEmpty()) {
                    err.println(name + ": no findings in " + decode.iwarpConversations() + " iWARP connection"
                            + (decode.iwarpConversations() == 1 ? "" : "s") + " (" + pdus[0] + " PDUs)");
                }
            } catch (IOException e) {
                CaptureInput.failed(file, "check", err, e);
                unreadable = true;
                continue;
            }
            found |= !findings.isEmpty();
            for (Finding finding : findings) {
                if (json) {
                    jsonOut.append(firstJson ? "\n  " : ",\n  ").append(toJson(name, finding));
                    firstJson = false;
                } else {
                    out.println((files.size() > 1 ? name + ": " : "") + finding);
                }
            }
        }
        if (json) {
            out.println(jsonOut.append(firstJson ? "]" : "\n]"));
        }
        out.flush();
        err.flush();
        return unreadable ? EXIT_UNREADABLE : found ? EXIT_FINDINGS : 0;
    }

    /** Why a capture without an MPA Request has nothing to check, in one sentence. */
    static String noIwarp(String name, int tcpConnections) {
        return name + (tcpConnections == 0 ? " holds no TCP connection"
                : " holds " + tcpConnections + " TCP connection" + (tcpConnections == 1 ? " and it is not" : "s and none "
                        + "of them is") + " iWARP (no MPA Request found)") + ": nothing to check";
    }

    private static String toJson(String file, Finding finding) {
        StringBuilder json = new StringBuilder("{\"file\": ").append(DecodeJson.string(file))
                .append(", \"rule\": ").append(DecodeJson.string(finding.rule().id()))
                .append(", \"rfc\": ").append(DecodeJson.string(finding.rule().section()))
                .append(", \"frames\": ").append(finding.frames())
                .append(", \"conversation\": ").append(finding.conversation())
                .append(", \"direction\": ").append(DecodeJson.string(finding.direction()))
                .append(", \"finding\": ").append(DecodeJson.string(finding.sentence()))
                .append(", \"quirk\": ").append(finding.quirk() == null ? "null" : DecodeJson.string(finding.quirk()));
        return json.append('}').toString();
    }
}
