package org.jiwarp.rpcrdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jiwarp.capture.check.CaptureChecker;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.decode.RpcRdmaFields;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.rnic.Rnic;
import org.jiwarp.rnic.RnicOptions;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A capture of {@link RpcRdmaClient} against {@link LoopbackResponder} (inline calls, a Read
 * chunk with a Write chunk, a Position Zero Read chunk with a Reply chunk, RDMA_ERROR of both
 * kinds), decoded by jiwarp and by tshark with its RPC-over-RDMA dissector on: every
 * {@code rpcordma.*} field of every frame agrees.
 */
class RpcRdmaCaptureTsharkTest {

    private static final int PROGRAM = 400017;

    private static Path capture;

    @BeforeAll
    static void capture(@TempDir Path directory) throws IOException {
        try (LoopbackResponder responder = new LoopbackResponder();
                Rnic rnic = Rnic.open(RnicOptions.defaults().capture(directory))) {
            RpcRdmaClient client = RpcRdmaClient.connect(rnic, responder.address(), new RpcRdmaClient.Options(8,
                    4096, true, Duration.ZERO, Duration.ofSeconds(20)));
            try {
                client.call(RpcRdmaCall.inline(PROGRAM, 1, 1, out -> Xdr.putInt(out, 7)), AuthSys.root("t")).release();
                ByteBuf chunk = Unpooled.directBuffer(10_000).writeZero(10_000);
                client.call(RpcRdmaCall.inline(PROGRAM, 1, 2, out -> Xdr.putInt(out, 10_000)).withReadChunk(chunk)
                        .withWriteChunk(10_000), AuthSys.root("t")).release();
                chunk.release();
                byte[] big = new byte[6_000];
                client.call(RpcRdmaCall.inline(PROGRAM, 1, 3, out -> Xdr.putOpaque(out, big)).withReplyChunk(16_384),
                        AuthSys.root("t")).release();
                responder.misbehave(LoopbackResponder.Misbehaviour.ERR_VERS);
                assertThrows(RpcException.class, () -> client.call(RpcRdmaCall.inline(PROGRAM, 1, 4, out -> { }),
                        AuthSys.root("t")));
                responder.misbehave(LoopbackResponder.Misbehaviour.ERR_CHUNK);
                assertThrows(RpcException.class, () -> client.call(RpcRdmaCall.inline(PROGRAM, 1, 4, out -> { }),
                        AuthSys.root("t")));
            } finally {
                client.close();
            }
        }
        try (Stream<Path> files = Files.list(directory)) {
            capture = files.filter(f -> f.toString().endsWith(".pcap")).findFirst().orElseThrow();
        }
    }

    @Test
    void everyRpcOverRdmaFieldAgreesWithTshark() throws IOException {
        Path tshark = tshark();
        Map<Integer, Map<String, String>> jiwarp = new TreeMap<>();
        IwarpStreamDecoder.decode(PcapFile.read(capture)).fieldsByFrame().forEach((frame, fields) -> {
            Map<String, String> ours = new TreeMap<>();
            fields.forEach((name, value) -> {
                if (RpcRdmaFields.NAMES.contains(name)) {
                    ours.put(name, value);
                }
            });
            if (!ours.isEmpty()) {
                jiwarp.put(frame, ours);
            }
        });
        Map<Integer, Map<String, String>> wireshark = tsharkFields(tshark, capture);
        // Five calls and their replies; between them every procedure sent, a Read, Write and Reply chunk.
        assertEquals(10, wireshark.size(), "frames in which tshark finds RPC-over-RDMA: " + wireshark.keySet());
        for (String shown : List.of("rpcordma.msg_type=0", "rpcordma.msg_type=1", "rpcordma.msg_type=4",
                "rpcordma.reads_count=1", "rpcordma.writes_count=1", "rpcordma.reply_count=1", "rpcordma.errcode=1",
                "rpcordma.errcode=2")) {
            assertTrue(wireshark.values().stream().anyMatch(f -> shown.equals(entry(f, shown))),
                    "tshark shows no frame with " + shown);
        }
        List<String> mismatches = new ArrayList<>();
        TreeSet<Integer> frames = new TreeSet<>(jiwarp.keySet());
        frames.addAll(wireshark.keySet());
        for (int frame : frames) {
            for (String field : RpcRdmaFields.NAMES) {
                String mine = jiwarp.getOrDefault(frame, Map.of()).get(field);
                String theirs = wireshark.getOrDefault(frame, Map.of()).get(field);
                if (mine == null ? theirs != null : !mine.equals(theirs)) {
                    mismatches.add("frame " + frame + " " + field + ": tshark=" + theirs + " jiwarp=" + mine);
                }
            }
        }
        assertEquals(List.of(), mismatches, mismatches.size() + " disagreement(s) with tshark");
    }

    /**
     * {@code jiwarp check} on the same capture: every RDMA Read Request and RDMA Write targets a chunk
     * the other side advertised, within its length, and nothing else is wrong either.
     */
    @Test
    void theCaptureChecksClean() throws IOException {
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(capture));
        long operations = decode.pdus().stream().filter(p -> "0x00".equals(p.fields().get("iwarp_rdma.opcode"))
                || "0x01".equals(p.fields().get("iwarp_rdma.opcode"))).count();
        assertTrue(operations >= 3, "RDMA Writes and Read Requests in the capture: " + operations);
        assertEquals(List.of(), CaptureChecker.check(decode));
    }

    private static String entry(Map<String, String> fields, String shown) {
        String name = shown.substring(0, shown.indexOf('='));
        return name + "=" + fields.get(name);
    }

    private static Path tshark() {
        String path = System.getenv("PATH");
        for (String dir : path == null ? new String[0] : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "tshark");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        Prerequisites.require("tshark is not installed (apt-get install tshark), so nothing compares jiwarp's "
                + "RPC-over-RDMA decode with Wireshark's");
        return null;
    }

    /** Frame number to (rpcordma field to value) as {@code tshark -T fields} prints them. */
    static Map<Integer, Map<String, String>> tsharkFields(Path tshark, Path capture) throws IOException {
        List<String> command = new ArrayList<>(List.of(tshark.toString(), "-r", capture.toString(), "-n",
                "--disable-protocol", "smb_direct", "-o", "tcp.try_heuristic_first:TRUE", "-T", "fields",
                "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,",
                "-e", "frame.number"));
        for (String field : RpcRdmaFields.NAMES) {
            command.add("-e");
            command.add(field);
        }
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = process.getInputStream()) {
            in.transferTo(out);
        }
        try {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "tshark did not finish");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for tshark", e);
        }
        assertEquals(0, process.exitValue(), "tshark's exit status for " + command);
        Map<Integer, Map<String, String>> frames = new TreeMap<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            String[] columns = line.split("\t", -1);
            Map<String, String> values = new TreeMap<>();
            for (int i = 1; i < columns.length; i++) {
                if (!columns[i].isEmpty()) {
                    values.put(RpcRdmaFields.NAMES.get(i - 1), columns[i]);
                }
            }
            if (!values.isEmpty()) {
                frames.put(Integer.parseInt(columns[0].trim()), values);
            }
        }
        return frames;
    }
}
