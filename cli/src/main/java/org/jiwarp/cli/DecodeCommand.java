package org.jiwarp.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.FrameFields;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.decode.StreamingDecode;
import org.jiwarp.capture.pcap.CaptureReader;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapRecord;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp decode FILE...}: one line per MPA, DDP or RDMAP PDU, like tshark's summary;
 * {@code --fields} prints Wireshark's field names and tshark's value formatting; {@code -e FIELD}
 * prints the chosen fields one line per frame exactly as {@code tshark -T fields -e FIELD} does
 * (iWARP fields and the common frame, IP and TCP ones); {@code --json} prints every PDU as JSON.
 *
 * <p>Several files are decoded one after the other, each on its own (frame numbers restart); in
 * the summary a {@code ==> FILE <==} line heads each, with {@code --json} the output is one object
 * per file. Exit status: 0 decoded; 1 a file was unreadable or held no iWARP stream, or with
 * {@code --check} a PDU had a problem (bad CRC, malformed header, ...); 2 usage error.
 */
@Command(name = "decode", mixinStandardHelpOptions = true,
        description = "Decode the iWARP traffic (MPA, DDP, RDMAP) of pcap or pcapng files (also gzip-compressed; "
                + "- reads standard input).")
final class DecodeCommand implements Callable<Integer> {

    @Parameters(index = "0..*", arity = "1..*", paramLabel = "FILE",
            description = "A pcap or pcapng capture, possibly gzip-compressed; - for standard input.")
    List<Path> files = new ArrayList<>();

    @Option(names = "--fields", description = "Print Wireshark field names and values (iwarp_mpa.*, iwarp_ddp.*, "
            + "iwarp_rdma.*, and rpcordma.* on Sends carrying an RPC-over-RDMA header) formatted as tshark -T "
            + "fields formats them.")
    boolean fields;

    @Option(names = {"-e", "--field"}, paramLabel = "FIELD", description = "With --fields: print only these "
            + "fields, tab-separated, one line per frame, as tshark -T fields -e FIELD does. Besides the iWARP "
            + "fields: frame.number, frame.time_relative, frame.time_epoch, ip.src, ip.dst, ipv6.src, ipv6.dst, "
            + "tcp.srcport, tcp.dstport, tcp.stream, tcp.seq.")
    List<String> selected = new ArrayList<>();

    @Option(names = "--json", description = "Print the PDUs as a JSON array.")
    boolean json;

    @Option(names = "--check", description = "Exit with status 1 when any PDU has a problem (bad CRC, "
            + "malformed header, marker not pointing at its FPDU, ...).")
    boolean check;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Standard input, for {@code -}; replaced in tests. */
    InputStream stdin = System.in;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (fields && json) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--fields and --json exclude each other");
        }
        if (!selected.isEmpty() && !fields) {
            throw new CommandLine.ParameterException(spec.commandLine(), "-e FIELD needs --fields");
        }
        List<String> unknown = FrameFields.unknown(selected);
        if (!unknown.isEmpty()) {
            // tshark's own message and exit status for a field it does not know.
            err.println("jiwarp decode: " + FrameFields.unknownFieldsMessage(unknown));
            err.flush();
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
        String arrow = arrow(Charset.defaultCharset());
        boolean several = files.size() > 1;
        boolean failed = false;
        boolean[] problems = {false};
        JsonOutput jsonOut = new JsonOutput(out, several);
        for (Path file : files) {
            String name = CaptureInput.name(file);
            if (fields && !selected.isEmpty()) {
                // -e prints every frame, iWARP or not: the one output that reads the capture whole.
                failed |= !decodeSelected(file, out, err);
                continue;
            }
            try (CaptureReader reader = CaptureInput.open(file, stdin, "decode", err)) {
                if (reader == null) {
                    failed = true;
                    continue;
                }
                boolean[] headed = {false};
                StreamingDecode decode = new StreamingDecode(pdu -> {
                    problems[0] |= !pdu.problems().isEmpty();
                    if (json) {
                        jsonOut.pdu(name, pdu);
                    } else if (fields) {
                        out.println(fieldsLine(pdu));
                    } else {
                        if (several && !headed[0]) {
                            out.println("==> " + name + " <==");
                            headed[0] = true;
                        }
                        out.println(summaryLine(pdu, arrow));
                    }
                }, StreamingDecode.DEFAULT_WINDOW);
                long frames = 0;
                for (PcapRecord record = reader.next(); record != null; record = reader.next()) {
                    frames++;
                    decode.add(record, reader.linkType(record));
                }
                decode.finish();
                if (decode.iwarpConversations() == 0) {
                    err.println("jiwarp decode: " + name + ": no iWARP stream (no MPA Request frame in "
                            + decode.tcpConversations() + " TCP conversation" + (decode.tcpConversations() == 1 ? "" : "s")
                            + " of " + frames + " frames)" + (reader.warning() == null ? "" : "; the " + reader.warning()));
                    failed = true;
                    continue;
                }
                if (json) {
                    jsonOut.endFile(name);
                }
                List<String> notes = new ArrayList<>();
                if (reader.warning() != null) {
                    notes.add(reader.warning());
                }
                notes.addAll(decode.notes());
                for (String note : notes) {
                    err.println("note: " + (several ? name + ": " : "") + note);
                }
            } catch (IOException e) {
                CaptureInput.failed(file, "decode", err, e);
                failed = true;
            }
        }
        jsonOut.end();
        out.flush();
        err.flush();
        return failed || (check && problems[0]) ? Jiwarp.EXIT_RUNTIME_ERROR : 0;
    }

    /**
     * {@code --json}, written as PDUs come: one array of PDUs, or with several files an array of
     * {@code {"file": ..., "pdus": [...]}}, one per file that holds iWARP traffic.
     */
    private static final class JsonOutput {
        private final PrintWriter out;
        private final boolean several;
        private boolean anyFile;
        private boolean fileOpen;
        private boolean anyPdu;

        JsonOutput(PrintWriter out, boolean several) {
            this.out = out;
            this.several = several;
        }

        void pdu(String file, DecodedPdu pdu) {
            openFile(file);
            out.print((anyPdu ? "," : "") + (several ? "\n    " : "\n  ") + DecodeJson.toJson(pdu));
            anyPdu = true;
        }

        /** The end of a file with iWARP traffic (PDUs or none). */
        void endFile(String file) {
            openFile(file);
            out.print(anyPdu ? (several ? "\n  ]}" : "\n]") : (several ? "]}" : "]"));
            fileOpen = false;
            anyPdu = false;
        }

        private void openFile(String file) {
            if (fileOpen) {
                return;
            }
            if (several) {
                out.print((anyFile ? ",\n  " : "[\n  ") + "{\"file\": " + DecodeJson.string(file) + ", \"pdus\": [");
            } else {
                out.print("[");
            }
            anyFile = true;
            fileOpen = true;
        }

        /** The end of the output: nothing when no file held iWARP traffic. */
        void end() {
            if (anyFile) {
                out.println(several ? "\n]" : "");
            }
        }
    }

    /** {@code -e FIELD ...}: every frame's chosen fields; {@code false} when the file could not be decoded. */
    private boolean decodeSelected(Path file, PrintWriter out, PrintWriter err) {
        PcapFile capture = CaptureInput.read(file, stdin, "decode", err);
        if (capture == null) {
            return false;
        }
        CaptureDecode decode = IwarpStreamDecoder.decode(capture);
        if (decode.iwarpConversations() == 0) {
            err.println("jiwarp decode: " + CaptureInput.name(file) + ": no iWARP stream (no MPA Request frame in "
                    + decode.tcpConversations() + " TCP conversation" + (decode.tcpConversations() == 1 ? "" : "s")
                    + " of " + capture.records().size() + " frames)"
                    + (capture.warning() == null ? "" : "; the " + capture.warning()));
            return false;
        }
        printSelected(out, decode, capture);
        for (String note : decode.notes()) {
            err.println("note: " + (files.size() > 1 ? CaptureInput.name(file) + ": " : "") + note);
        }
        return true;
    }

    /** The arrow between source and destination: "→" where the output encoding has it, else "->". */
    static String arrow(Charset charset) {
        return charset.equals(StandardCharsets.UTF_8) || charset.name().startsWith("UTF-") ? "→" : "->";
    }

    private static String summaryLine(DecodedPdu pdu, String arrow) {
        StringBuilder line = new StringBuilder(String.format("%5d  %s %s %s  %s", pdu.frameNumber(),
                pdu.source(), arrow, pdu.destination(), pdu.summary()));
        for (String problem : pdu.problems()) {
            line.append("  [").append(problem).append(']');
        }
        return line.toString();
    }

    private static String fieldsLine(DecodedPdu pdu) {
        StringBuilder line = new StringBuilder().append(pdu.frameNumber());
        for (Map.Entry<String, String> field : pdu.fields().entrySet()) {
            line.append('\t').append(field.getKey()).append('=').append(field.getValue());
        }
        if (pdu.crcGood() != null) {
            line.append('\t').append("crc_verdict=").append(pdu.crcGood() ? "Good CRC32" : "Bad CRC32");
        }
        return line.toString();
    }

    private void printSelected(PrintWriter out, CaptureDecode decode, PcapFile capture) {
        Map<Integer, Map<String, String>> iwarp = decode.fieldsByFrame();
        boolean frameFields = selected.stream().anyMatch(FrameFields.NAMES::contains);
        Map<Integer, Map<String, String>> frame = frameFields ? FrameFields.of(capture) : Map.of();
        int frames = capture.records().size();
        for (int number = 1; number <= frames; number++) {
            Map<String, String> values = iwarp.get(number);
            Map<String, String> frameValues = frame.get(number);
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < selected.size(); i++) {
                if (i > 0) {
                    line.append('\t');
                }
                String name = selected.get(i);
                String value;
                if ("frame.number".equals(name)) {
                    value = Integer.toString(number);
                } else if (FrameFields.NAMES.contains(name)) {
                    value = frameValues == null ? null : frameValues.get(name);
                } else {
                    value = values == null ? null : values.get(name);
                }
                if (value != null) {
                    line.append(value);
                }
            }
            out.println(line);
        }
    }
}
