package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jiwarp.conformance.Tshark;
import org.jiwarp.capture.decode.DecodedPdu;
import org.junit.jupiter.api.Test;

/**
 * The {@code pcap-samples/siw-*.pcap} captures: real Linux siw traffic with jiwarp, recorded by
 * QEMU's filter-dump on the siw peer's NIC and cut to one connection. Each decodes to its committed
 * {@code .decode.txt} and {@code .fields.tsv}, tshark decodes it to the same fields with no
 * malformed frame, and each shows what it is committed for. Needs no QEMU: it runs everywhere.
 *
 * <p>Their ports, addresses and Tagged Offsets change with every run, so they are not regenerated
 * byte for byte; the siw tests write new ones on request, then review the diff of the decodes:
 *
 * <pre>
 * mvn -pl conformance-tests test -Dtest='SiwRpingInteropTest,SiwErrorInteropTest' -Djiwarp.regenerateSiwSamples=true
 * </pre>
 */
class SiwSampleCapturesTest {

    static final Path SAMPLES = Path.of("..", "pcap-samples");
    private static final String REGENERATE = "jiwarp.regenerateSiwSamples";

    /** File name to what it shows (and the decoder problems it must report, as substrings). */
    static final Map<String, List<String>> COMMITTED = new LinkedHashMap<>();

    static {
        COMMITTED.put("siw-rping-rev2-crc.pcap", List.of());
        COMMITTED.put("siw-rping-p2p.pcap", List.of());
        COMMITTED.put("siw-rping-siw-client-4096.pcap", List.of());
        COMMITTED.put("siw-terminate-invalid-stag.pcap", List.of());
        COMMITTED.put("siw-terminate-bad-crc.pcap", List.of("bad CRC32", "names no RFC error",
                "Linux siw's bit layout"));
    }

    /** Whether this run should write new samples. */
    static boolean regenerating() {
        return Boolean.getBoolean(REGENERATE);
    }

    /** Commits {@code capture} as sample {@code name} with its decodes, when regenerating. */
    static void keep(Path capture, String name) throws IOException {
        if (!regenerating()) {
            return;
        }
        if (!COMMITTED.containsKey(name)) {
            throw new IllegalArgumentException(name + " is not a listed siw sample");
        }
        Path sample = SAMPLES.resolve(name);
        Files.copy(capture, sample, StandardCopyOption.REPLACE_EXISTING);
        String stem = stem(name);
        Files.writeString(SAMPLES.resolve(stem + ".decode.txt"), decode(sample, false));
        Files.writeString(SAMPLES.resolve(stem + ".fields.tsv"), decode(sample, true));
    }

    @Test
    void committedSamplesDecodeToTheirExpectedDecodes() throws IOException {
        for (String name : COMMITTED.keySet()) {
            Path sample = SAMPLES.resolve(name);
            assertTrue(Files.exists(sample), sample + " is missing: regenerate (see SiwSampleCapturesTest)");
            assertEquals(Files.readString(SAMPLES.resolve(stem(name) + ".decode.txt")), decode(sample, false),
                    stem(name) + ".decode.txt");
            assertEquals(Files.readString(SAMPLES.resolve(stem(name) + ".fields.tsv")), decode(sample, true),
                    stem(name) + ".fields.tsv");
        }
    }

    @Test
    void tsharkAgreesAndTheDecoderFindsOnlyWhatIsThere() throws IOException {
        Tshark.required();
        for (Map.Entry<String, List<String>> sample : COMMITTED.entrySet()) {
            CaptureCheck check = CaptureCheck.of(SAMPLES.resolve(sample.getKey()), null);
            assertEquals(List.of(), check.disagreements(), sample.getKey());
            assertEquals(List.of(), check.notes(), sample.getKey());
            List<String> expected = sample.getValue();
            assertEquals(expected.size(), check.problems().size(), sample.getKey() + ": " + check.problems());
            for (int i = 0; i < expected.size(); i++) {
                assertTrue(check.problems().get(i).contains(expected.get(i)), check.problems().get(i));
            }
        }
    }

    @Test
    void eachSampleShowsWhatItIsCommittedFor() throws IOException {
        // jiwarp's client asked for CRC; siw's server honoured it: every FPDU carries a good one.
        CaptureCheck crc = CaptureCheck.of(SAMPLES.resolve("siw-rping-rev2-crc.pcap"), true);
        assertEquals(List.of(), crc.problems());
        assertTrue(crc.first(DecodedPdu.Kind.MPA_REPLY).summary().contains("rev=2 M=0 C=1 enhanced IRD=1 ORD=1"),
                crc.first(DecodedPdu.Kind.MPA_REPLY).summary());
        assertEquals(3, crc.count("Read Request [last DDP segment]"));

        // RFC 6581 peer-to-peer: siw picks the Write RTR; jiwarp's first FPDU is the zero-length Write.
        CaptureCheck p2p = CaptureCheck.of(SAMPLES.resolve("siw-rping-p2p.pcap"), false);
        assertTrue(p2p.first(DecodedPdu.Kind.MPA_REPLY).summary().contains("P2P WRITE-RTR"),
                p2p.first(DecodedPdu.Kind.MPA_REPLY).summary());
        assertTrue(p2p.first(DecodedPdu.Kind.FPDU).summary().startsWith("Write [last DDP segment] STag=0x00000001 "
                + "TO=0x0 payload=0 "), p2p.first(DecodedPdu.Kind.FPDU).summary());

        // siw as the client: its Request, and its 4096-octet Read Responses cut into several FPDUs.
        CaptureCheck client = CaptureCheck.of(SAMPLES.resolve("siw-rping-siw-client-4096.pcap"), false);
        assertTrue(client.first(DecodedPdu.Kind.MPA_REQUEST).summary().contains("rev=2 M=0 C=0 enhanced IRD=1 ORD=1"),
                client.first(DecodedPdu.Kind.MPA_REQUEST).summary());
        assertTrue(client.count("Read Response [more DDP segments]") >= 3, "multi-segment Read Responses");

        // siw's Terminates in its own bit layout: 0x11 reads the same both ways; 0x02 0x02 does not.
        assertEquals(List.of("DDP / Tagged Buffer Error / Invalid STag"),
                terminates(CaptureCheck.of(SAMPLES.resolve("siw-terminate-invalid-stag.pcap"), null)));
        CaptureCheck badCrc = CaptureCheck.of(SAMPLES.resolve("siw-terminate-bad-crc.pcap"), null);
        assertEquals(List.of("RDMAP / Remote Operation Error / code 0x02"), terminates(badCrc));
        List<Boolean> verdicts = new ArrayList<>();
        for (DecodedPdu pdu : badCrc.decode().pdus()) {
            if (pdu.kind() == DecodedPdu.Kind.FPDU) {
                verdicts.add(pdu.crcGood());
            }
        }
        assertEquals(List.of(false, true), verdicts, "jiwarp's damaged Send, then siw's Terminate");
    }

    /** The error part of every Terminate's summary ("LAYER / error type / error"). */
    private static List<String> terminates(CaptureCheck check) {
        List<String> errors = new ArrayList<>();
        for (DecodedPdu pdu : check.decode().pdus()) {
            String summary = pdu.summary();
            if (summary.startsWith("Terminate")) {
                int from = summary.indexOf("MO=0 ") + "MO=0 ".length();
                errors.add(summary.substring(from, summary.indexOf(" ulpdu=")));
            }
        }
        return errors;
    }

    private static String decode(Path sample, boolean fields) {
        JiwarpCommand.Run run = fields ? JiwarpCommand.run("decode", "--fields", sample)
                : JiwarpCommand.run("decode", sample);
        assertEquals(0, run.exit(), run::toString);
        return run.out().replace(SAMPLES.toString() + "/", "");
    }

    private static String stem(String name) {
        return name.substring(0, name.length() - ".pcap".length());
    }
}
