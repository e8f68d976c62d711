package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jiwarp.cli.Jiwarp;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The captures under {@code pcap-samples/} are exactly what jiwarp's encoders write today, decode
 * to their committed expected decodes, and decode the same way in tshark: every field equal, no
 * malformed packet, "Good CRC32" everywhere but the one deliberately corrupted FPDU.
 */
class SampleCapturesTest {

    static final Path SAMPLES = Path.of("..", "pcap-samples");

    private static Path generated;
    private static Map<String, String> descriptions;

    @BeforeAll
    static void generate(@TempDir Path temp) throws IOException {
        generated = temp;
        descriptions = SampleCaptures.writeAll(temp);
        if (Boolean.getBoolean("jiwarp.regenerateSamples")) {
            Files.createDirectories(SAMPLES);
            for (String name : descriptions.keySet()) {
                Files.copy(temp.resolve(name), SAMPLES.resolve(name), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                if (name.startsWith("not-iwarp")) {
                    continue;
                }
                String stem = name.substring(0, name.length() - ".pcap".length());
                Files.writeString(SAMPLES.resolve(stem + ".decode.txt"), jiwarp("decode", SAMPLES.resolve(name)));
                Files.writeString(SAMPLES.resolve(stem + ".fields.tsv"),
                        jiwarp("decode", "--fields", SAMPLES.resolve(name)));
            }
        }
    }

    @Test
    void committedCapturesAreWhatTheEncodersWrite() throws IOException {
        for (String name : descriptions.keySet()) {
            Path committed = SAMPLES.resolve(name);
            assertTrue(Files.exists(committed), committed + " is missing: regenerate the samples (see SampleCaptures)");
            assertArrayEquals(Files.readAllBytes(generated.resolve(name)), Files.readAllBytes(committed),
                    name + " differs from what the encoders write now");
        }
    }

    @Test
    void committedCapturesDecodeToTheirExpectedDecodes() throws IOException {
        for (String name : descriptions.keySet()) {
            if (name.startsWith("not-iwarp")) {
                continue;
            }
            String stem = name.substring(0, name.length() - ".pcap".length());
            assertEquals(Files.readString(SAMPLES.resolve(stem + ".decode.txt")), jiwarp("decode", SAMPLES.resolve(name)),
                    stem + ".decode.txt");
            assertEquals(Files.readString(SAMPLES.resolve(stem + ".fields.tsv")),
                    jiwarp("decode", "--fields", SAMPLES.resolve(name)), stem + ".fields.tsv");
        }
    }

    @Test
    void everyOpcodeAndEveryTerminateLayerIsPresent() throws IOException {
        CaptureDecode opcodes = decode("jiwarp-opcodes.pcap");
        List<String> seen = new ArrayList<>();
        for (DecodedPdu pdu : opcodes.pdus()) {
            String opcode = pdu.fields().get("iwarp_rdma.opcode");
            if (opcode != null && !seen.contains(opcode)) {
                seen.add(opcode);
            }
        }
        for (int code = 0; code <= 0xB; code++) {
            if (code == 7) {
                continue; // Terminates live in their own capture: they end the stream.
            }
            assertTrue(seen.contains(String.format("0x%02x", code)), "opcode " + code + " missing: " + seen);
        }
        List<TerminateError> errors = new ArrayList<>();
        for (DecodedPdu pdu : decode("jiwarp-terminates.pcap").pdus()) {
            if (pdu.terminateError() != null) {
                errors.add(pdu.terminateError());
            }
        }
        assertEquals(List.of(TerminateError.RDMAP_INVALID_STAG, TerminateError.RDMAP_CATASTROPHIC_LOCAL_TO_STREAM,
                TerminateError.DDP_UNTAGGED_INVALID_MSN_NO_BUFFER, TerminateError.DDP_TAGGED_BASE_OR_BOUNDS_VIOLATION,
                TerminateError.LLP_CRC_ERROR), errors);
    }

    @Test
    void crcVerdictsAreGoodExceptTheCorruptedFpdus() throws IOException {
        for (String name : descriptions.keySet()) {
            for (DecodedPdu pdu : decode(name).pdus()) {
                if (pdu.crcGood() == null) {
                    continue;
                }
                boolean corrupted = pdu.summary().contains("damaged")
                        || (name.equals("jiwarp-bad-crc.pcap") && pdu.fields().get("iwarp_ddp.msn").equals("2"))
                        || (name.equals("jiwarp-terminates.pcap") && pdu.fields().get("iwarp_mpa.ulpdulength")
                                .equals("35"));
                assertEquals(!corrupted, pdu.crcGood(), name + " frame " + pdu.frameNumber() + ": " + pdu.summary());
            }
        }
    }

    @Test
    void tsharkAgreesFieldByField() throws IOException {
        Path tshark = Tshark.required();
        List<String> mismatches = new ArrayList<>();
        for (String name : descriptions.keySet()) {
            Path capture = SAMPLES.resolve(name);
            if (name.startsWith("not-iwarp")) {
                assertEquals(Map.of(), Tshark.fields(tshark, capture), "tshark found iWARP in " + name);
                continue;
            }
            mismatches.addAll(FieldComparison.mismatches(tshark, capture));
            assertEquals(List.of(), Tshark.malformedFrames(tshark, capture), "tshark: malformed packets in " + name);
        }
        assertEquals(List.of(), mismatches, mismatches.size() + " mismatch(es) with tshark");
    }

    private static CaptureDecode decode(String name) throws IOException {
        return IwarpStreamDecoder.decode(PcapFile.read(SAMPLES.resolve(name)));
    }

    static String jiwarp(Object... args) {
        String[] strings = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            strings[i] = args[i].toString();
        }
        StringWriter out = new StringWriter();
        CommandLine line = Jiwarp.commandLine();
        line.setOut(new PrintWriter(out));
        line.setErr(new PrintWriter(new StringWriter()));
        int exit = line.execute(strings);
        assertEquals(0, exit, "jiwarp " + String.join(" ", strings) + " failed");
        return out.toString().replace(SAMPLES.toString() + "/", "");
    }

    static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
