package org.jiwarp.conformance;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jiwarp.capture.decode.RpcRdmaFields;
import org.jiwarp.testing.Prerequisites;

/**
 * Runs tshark (Wireshark 4.0) on a capture and returns its iWARP fields per frame, for comparing
 * with jiwarp's decoder. The RPCoRDMA and SMB Direct heuristics are disabled for the iWARP fields:
 * they can claim iWARP payloads; the {@code rpcordma.*} fields come from a second run with RPCoRDMA on.
 */
public final class Tshark {

    /** Every field jiwarp's decoder emits and the comparison checks. */
    public static final List<String> FIELDS = List.of(
            "iwarp_mpa.key.req", "iwarp_mpa.key.rep", "iwarp_mpa.marker_flag", "iwarp_mpa.crc_flag",
            "iwarp_mpa.rej_flag", "iwarp_mpa.res", "iwarp_mpa.rev", "iwarp_mpa.pdlength", "iwarp_mpa.privatedata",
            "iwarp_mpa.ulpdulength", "iwarp_mpa.pad", "iwarp_mpa.crc", "iwarp_mpa.crc_check", "iwarp_mpa.marker_res",
            "iwarp_mpa.marker_fpduptr",
            "iwarp_ddp.tagged_flag", "iwarp_ddp.last_flag", "iwarp_ddp.rsvd", "iwarp_ddp.dv", "iwarp_ddp.rsvdulp",
            "iwarp_ddp.stag", "iwarp_ddp.tagged_offset", "iwarp_ddp.qn", "iwarp_ddp.msn", "iwarp_ddp.mo",
            "iwarp_rdma.version", "iwarp_rdma.rsv", "iwarp_rdma.opcode", "iwarp_rdma.reserved",
            "iwarp_rdma.inval_stag", "iwarp_rdma.sinkstag", "iwarp_rdma.sinkto", "iwarp_rdma.rdmardsz",
            "iwarp_rdma.srcstag", "iwarp_rdma.srcto",
            "iwarp_rdma.term_layer", "iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_etype_ddp",
            "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_etype", "iwarp_rdma.term_errcode_rdma",
            "iwarp_rdma.term_errcode_ddp_tagged", "iwarp_rdma.term_errcode_ddp_untagged",
            "iwarp_rdma.term_errcode", "iwarp_rdma.term_errcode_llp", "iwarp_rdma.term_hdrct_m",
            "iwarp_rdma.hdrct_d", "iwarp_rdma.hdrct_r", "iwarp_rdma.term_rsvd", "iwarp_rdma.term_ddp_seg_len",
            "iwarp_rdma.term_ddp_h", "iwarp_rdma.term_rdma_h",
            "iwarp_rdma.atomic.reserved", "iwarp_rdma.atomic.opcode", "iwarp_rdma.atomic.request_identifier",
            "iwarp_rdma.atomic.remote_stag", "iwarp_rdma.atomic.remote_tagged_offset",
            "iwarp_rdma.atomic.add_data", "iwarp_rdma.atomic.add_mask", "iwarp_rdma.atomic.swap_data",
            "iwarp_rdma.atomic.swap_mask", "iwarp_rdma.atomic.compare_data", "iwarp_rdma.atomic.compare_mask",
            "iwarp_rdma.atomic.original_request_identifier", "iwarp_rdma.atomic.original_remote_data_value");

    // Heuristics first: MPA is found by its keys, and a capture on an ephemeral port that some
    // port-registered dissector claims would otherwise show no iWARP at all.
    private static final List<String> COMMON = List.of("-n", "--disable-protocol", "rpcordma",
            "--disable-protocol", "smb_direct", "-o", "tcp.try_heuristic_first:TRUE");

    private Tshark() {
    }

    /**
     * The tshark executable on PATH; without one the calling test skips, or under CI fails
     * ({@link Prerequisites}).
     */
    public static Path required() {
        Path tshark = find();
        Prerequisites.require(tshark != null, "tshark is not installed (apt-get install tshark), so nothing compares "
                + "jiwarp's decode with Wireshark's");
        return tshark;
    }

    /** The tshark executable on PATH, or {@code null}. */
    public static Path find() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "tshark");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Frame number to (field to value), non-empty values only, as tshark -T fields prints them. */
    public static Map<Integer, Map<String, String>> fields(Path tshark, Path capture) throws IOException {
        return fields(tshark, capture, COMMON, FIELDS);
    }

    /**
     * The {@code rpcordma.*} fields per frame, from a run with the RPC-over-RDMA dissector on (its
     * heuristic decides which Sends carry a header, as jiwarp's decoder does).
     */
    public static Map<Integer, Map<String, String>> rpcOverRdmaFields(Path tshark, Path capture) throws IOException {
        List<String> options = new ArrayList<>(COMMON);
        int disable = options.indexOf("rpcordma") - 1;
        options.subList(disable, disable + 2).clear();
        return fields(tshark, capture, options, RpcRdmaFields.NAMES);
    }

    private static Map<Integer, Map<String, String>> fields(Path tshark, Path capture, List<String> options,
            List<String> names) throws IOException {
        List<String> command = new ArrayList<>(List.of(tshark.toString(), "-r", capture.toString()));
        command.addAll(options);
        command.addAll(List.of("-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=a",
                "-E", "aggregator=,", "-e", "frame.number"));
        for (String field : names) {
            command.add("-e");
            command.add(field);
        }
        Map<Integer, Map<String, String>> frames = new TreeMap<>();
        for (String line : run(command).split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] columns = line.split("\t", -1);
            Map<String, String> values = new TreeMap<>();
            for (int i = 1; i < columns.length && i <= names.size(); i++) {
                if (!columns[i].isEmpty()) {
                    values.put(names.get(i - 1), columns[i]);
                }
            }
            if (!values.isEmpty()) {
                frames.put(Integer.parseInt(columns[0].trim()), values);
            }
        }
        return frames;
    }

    private static final Pattern FRAME_NUMBER = Pattern.compile("<field name=\"frame.number\"[^>]* show=\"(\\d+)\"");
    private static final Pattern CRC_CHECK = Pattern.compile(
            "<field name=\"iwarp_mpa.crc_check\" showname=\"[^\"]*\\((Good|Bad) CRC32");
    private static final Pattern MALFORMED = Pattern.compile("<proto name=\"_ws.malformed\"");

    /** Per frame: the CRC verdicts ("Good"/"Bad", comma-joined) tshark shows. */
    public static Map<Integer, String> crcVerdicts(Path tshark, Path capture) throws IOException {
        Map<Integer, String> verdicts = new TreeMap<>();
        for (Packet packet : pdml(tshark, capture)) {
            if (!packet.crcVerdicts.isEmpty()) {
                verdicts.put(packet.frame, String.join(",", packet.crcVerdicts));
            }
        }
        return verdicts;
    }

    /** Frames tshark marks as malformed. */
    public static List<Integer> malformedFrames(Path tshark, Path capture) throws IOException {
        List<Integer> frames = new ArrayList<>();
        for (Packet packet : pdml(tshark, capture)) {
            if (packet.malformed) {
                frames.add(packet.frame);
            }
        }
        return frames;
    }

    private static final class Packet {
        int frame;
        boolean malformed;
        final List<String> crcVerdicts = new ArrayList<>();
    }

    /**
     * Reads tshark's PDML line by line as it comes (one field a line): a capture of some hundred
     * megabytes gives gigabytes of PDML, more than one string can hold.
     */
    private static List<Packet> pdml(Path tshark, Path capture) throws IOException {
        List<String> command = new ArrayList<>(List.of(tshark.toString(), "-r", capture.toString()));
        command.addAll(COMMON);
        command.addAll(List.of("-T", "pdml"));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Packet> packets = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            Packet packet = null;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.contains("<packet>")) {
                    packet = new Packet();
                } else if (packet != null && line.contains("</packet>")) {
                    if (packet.frame > 0) {
                        packets.add(packet);
                    }
                    packet = null;
                } else if (packet != null) {
                    Matcher frame = FRAME_NUMBER.matcher(line);
                    if (packet.frame == 0 && line.contains("frame.number") && frame.find()) {
                        packet.frame = Integer.parseInt(frame.group(1));
                    }
                    packet.malformed |= line.contains("_ws.malformed") && MALFORMED.matcher(line).find();
                    Matcher crc = CRC_CHECK.matcher(line);
                    while (line.contains("crc_check") && crc.find()) {
                        packet.crcVerdicts.add(crc.group(1));
                    }
                }
            }
        }
        finish(process, command);
        return packets;
    }

    /**
     * The TCP connections (tshark's {@code tcp.stream} numbers) that open with the addresses and
     * ports of an earlier connection in the capture. tshark gives such a connection a stream of its
     * own, but its iWARP dissector keeps its MPA state per address-and-port pair and takes the new
     * connection's MPA Request and Reply for FPDUs of the old one (Wireshark 4.0): those connections
     * are compared on their own ({@link #cut}).
     */
    public static List<Integer> reusedStreams(Path tshark, Path capture) throws IOException {
        String syns = run(List.of(tshark.toString(), "-n", "-r", capture.toString(), "-Y",
                "tcp.flags.syn == 1 && tcp.flags.ack == 0", "-T", "fields", "-e", "tcp.stream", "-e", "ip.src",
                "-e", "ipv6.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport"));
        Map<String, Integer> firstStream = new java.util.HashMap<>();
        List<Integer> reused = new ArrayList<>();
        for (String line : syns.split("\n")) {
            int tab = line.indexOf('\t');
            if (tab < 0) {
                continue;
            }
            int stream = Integer.parseInt(line.substring(0, tab).trim());
            Integer first = firstStream.putIfAbsent(line.substring(tab + 1), stream);
            if (first != null && first != stream && !reused.contains(stream)) {
                reused.add(stream);
            }
        }
        return reused;
    }

    /** The frame numbers of the given TCP streams. */
    public static java.util.Set<Integer> framesOf(Path tshark, Path capture, List<Integer> streams) throws IOException {
        java.util.Set<Integer> frames = new java.util.HashSet<>();
        if (streams.isEmpty()) {
            return frames;
        }
        String out = run(List.of(tshark.toString(), "-n", "-r", capture.toString(), "-Y", inStreams(streams),
                "-T", "fields", "-e", "frame.number"));
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                frames.add(Integer.parseInt(line.trim()));
            }
        }
        return frames;
    }

    /** Writes TCP stream {@code stream} of {@code capture}, alone, to {@code out} (pcap). */
    public static void cut(Path tshark, Path capture, int stream, Path out) throws IOException {
        run(List.of(tshark.toString(), "-n", "-r", capture.toString(), "-Y", inStreams(List.of(stream)), "-F", "pcap",
                "-w", out.toString()));
    }

    /** A display filter for the frames of {@code streams}. */
    public static String inStreams(List<Integer> streams) {
        StringBuilder filter = new StringBuilder("tcp.stream in {");
        for (int stream : streams) {
            filter.append(' ').append(stream);
        }
        return filter.append(" }").toString();
    }

    /** tshark's output for {@code args} on {@code capture}, every dissector on (RPC-over-RDMA and NFS among them). */
    public static String output(Path tshark, Path capture, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(tshark.toString(), "-n", "-r", capture.toString()));
        command.addAll(List.of(args));
        return run(command);
    }

    static String run(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = process.getInputStream()) {
            in.transferTo(out);
        }
        finish(process, command);
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void finish(Process process, List<String> command) throws IOException {
        try {
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("tshark did not finish: " + command);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for tshark", e);
        }
        if (process.exitValue() != 0) {
            throw new IOException("tshark exited with " + process.exitValue() + ": " + command);
        }
    }
}
