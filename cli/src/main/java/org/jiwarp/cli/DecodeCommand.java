package org.jiwarp.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapFormatException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jiwarp decode FILE.pcap}: one line per MPA, DDP or RDMAP PDU, like tshark's summary;
 * {@code --fields} prints Wireshark's field names and tshark's value formatting; {@code -e FIELD}
 * prints the chosen fields one line per frame exactly as {@code tshark -T fields -e FIELD} does;
 * {@code --json} prints every PDU as JSON.
 */
@Command(name = "decode", mixinStandardHelpOptions = true,
        description = "Decode the iWARP traffic (MPA, DDP, RDMAP) of a classic pcap file.")
final class DecodeCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "FILE.pcap", description = "A classic libpcap capture.")
    Path file;

    @Option(names = "--fields", description = "Print Wireshark field names and values (iwarp_mpa.*, iwarp_ddp.*, "
            + "iwarp_rdma.*) formatted as tshark -T fields formats them.")
    boolean fields;

    @Option(names = {"-e", "--field"}, paramLabel = "FIELD", description = "With --fields: print only these "
            + "fields, tab-separated, one line per frame, as tshark -T fields -e FIELD does.")
    List<String> selected = new ArrayList<>();

    @Option(names = "--json", description = "Print the PDUs as a JSON array.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

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
        if (!Files.isReadable(file)) {
            err.println("jiwarp decode: cannot read " + file);
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
        PcapFile capture;
        try {
            capture = PcapFile.read(file);
        } catch (PcapFormatException e) {
            err.println("jiwarp decode: " + e.getMessage());
            return Jiwarp.EXIT_RUNTIME_ERROR;
        } catch (java.io.IOException e) {
            err.println("jiwarp decode: cannot read " + file + ": " + e.getMessage());
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
        CaptureDecode decode = IwarpStreamDecoder.decode(capture);
        if (decode.iwarpConversations() == 0) {
            err.println("jiwarp decode: " + file + ": no iWARP stream (no MPA Request frame in "
                    + decode.tcpConversations() + " TCP conversation" + (decode.tcpConversations() == 1 ? "" : "s")
                    + " of " + capture.records().size() + " frames)");
            return Jiwarp.EXIT_RUNTIME_ERROR;
        }
        if (json) {
            out.println(DecodeJson.toJson(decode));
        } else if (fields && !selected.isEmpty()) {
            printSelected(out, decode, capture.records().size());
        } else if (fields) {
            for (DecodedPdu pdu : decode.pdus()) {
                StringBuilder line = new StringBuilder().append(pdu.frameNumber());
                for (Map.Entry<String, String> field : pdu.fields().entrySet()) {
                    line.append('\t').append(field.getKey()).append('=').append(field.getValue());
                }
                if (pdu.crcGood() != null) {
                    line.append('\t').append("crc_verdict=").append(pdu.crcGood() ? "Good CRC32" : "Bad CRC32");
                }
                out.println(line);
            }
        } else {
            for (DecodedPdu pdu : decode.pdus()) {
                StringBuilder line = new StringBuilder(String.format("%5d  %s → %s  %s", pdu.frameNumber(),
                        pdu.source(), pdu.destination(), pdu.summary()));
                for (String problem : pdu.problems()) {
                    line.append("  [").append(problem).append(']');
                }
                out.println(line);
            }
        }
        for (String note : decode.notes()) {
            err.println("note: " + note);
        }
        out.flush();
        return 0;
    }

    private void printSelected(PrintWriter out, CaptureDecode decode, int frames) {
        Map<Integer, Map<String, String>> byFrame = decode.fieldsByFrame();
        for (int frame = 1; frame <= frames; frame++) {
            Map<String, String> values = byFrame.get(frame);
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < selected.size(); i++) {
                if (i > 0) {
                    line.append('\t');
                }
                String name = selected.get(i);
                String value = "frame.number".equals(name) ? Integer.toString(frame)
                        : values == null ? null : values.get(name);
                if (value != null) {
                    line.append(value);
                }
            }
            out.println(line);
        }
    }
}
