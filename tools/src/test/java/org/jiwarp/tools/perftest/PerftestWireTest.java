package org.jiwarp.tools.perftest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.jiwarp.wire.perftest.PerftestWire;
import org.jiwarp.wire.perftest.PingpongDest;
import org.jiwarp.wire.perftest.Verb;
import org.junit.jupiter.api.Test;

/** The octets of perftest's control messages, its buffer layout and its parameter rules. */
class PerftestWireTest {

    @Test
    void pingpongDestIsTheLp64StructBigEndian() {
        byte[] gid = new byte[16];
        gid[0] = (byte) 0x82;
        gid[15] = 0x01;
        PingpongDest dest = new PingpongDest(0x11, 0x80, 0x0203, 0xabcdef, 0x1e69bc00, 0x00007f0c39c47000L, gid, 7, 3);
        byte[] wire = dest.encode();
        assertEquals(56, wire.length);
        assertEquals("00000011" + "00000080" + "00000203" + "00abcdef" + "1e69bc00" + "00000000"
                + "00007f0c39c47000" + "82000000000000000000000000000001" + "00000007" + "00000003",
                HexFormat.of().formatHex(wire));
        assertEquals(dest, PingpongDest.decode(wire));
        assertEquals(" local address: LID 0x11 QPN 0x0203 PSN 0xabcdef OUT 0x80 RKey 0x1e69bc00 VAddr 0x007f0c39c47000",
                dest.describe("local", Verb.READ));
        assertEquals(" remote address: LID 0000 QPN 000000 PSN 000000",
                PingpongDest.zero().describe("remote", Verb.SEND));
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(new byte[55]));
    }

    /** A jiwarp end's run rides after the version string's NUL; perftest's zeros carry none. */
    @Test
    void jiwarpRunAfterTheVersionString() {
        for (Verb verb : Verb.values()) {
            for (boolean latency : new boolean[] {false, true}) {
                PerftestWire.JiwarpRun run = new PerftestWire.JiwarpRun(verb, latency, 123_456_789, 1 << 28);
                byte[] field = PerftestWire.version("6.06", run);
                assertEquals(16, field.length);
                assertEquals("6.06", PerftestWire.cString(field), "what perftest's atof and %s see");
                assertEquals(6.06, PerftestWire.versionNumber(PerftestWire.cString(field)));
                assertEquals(0, field[15]);
                assertEquals(run, PerftestWire.jiwarpRun(field));
            }
        }
        byte[] writeLat = PerftestWire.version("6.06", new PerftestWire.JiwarpRun(Verb.WRITE, true, 1000, 2));
        assertEquals("362e3036006a03000003e80000000200", HexFormat.of().formatHex(writeLat),
                "'6.06', NUL, 'j', ib_write_lat, -n 1000, -s 2, NUL");
        assertEquals(null, PerftestWire.jiwarpRun(PerftestWire.version("6.06")), "perftest's own field");
        byte[] unknownProgram = PerftestWire.version("6.06", new PerftestWire.JiwarpRun(Verb.READ, true, 5, 5));
        unknownProgram[6] = 6;
        assertEquals(null, PerftestWire.jiwarpRun(unknownProgram));
    }

    @Test
    void versionAndSmallFields() {
        byte[] version = PerftestWire.version("6.06");
        assertEquals(16, version.length);
        assertArrayEquals("6.06\0\0\0\0\0\0\0\0\0\0\0\0".getBytes(StandardCharsets.US_ASCII), version);
        assertEquals("6.06", PerftestWire.cString(version));
        assertEquals(6.06, PerftestWire.versionNumber("6.06"));
        assertEquals(5.7, PerftestWire.versionNumber("5.70-beta"));
        assertEquals(0, PerftestWire.versionNumber("garbage"));
        assertEquals("00001000", HexFormat.of().formatHex(PerftestWire.int32(4096)));
        assertEquals(4096, PerftestWire.int32(PerftestWire.int32(4096)));
        assertArrayEquals(new byte[] {'5', 0}, PerftestWire.mtu(5));
        assertEquals(3, PerftestWire.mtu(new byte[] {'3', 0}));
        assertEquals(1024, PerftestWire.mtuOctets(3));
        assertEquals(0, PerftestWire.mtuOctets(0));
        assertEquals("3ff0000000000000", HexFormat.of().formatHex(PerftestWire.float64(1.0)));
    }

    @Test
    void bandwidthReportFieldsRoundTrip() {
        BwReport report = new BwReport(65536, 300, 12.5, 11.25, 0.000176);
        byte[][] fields = report.fields();
        assertEquals(5, fields.length);
        assertEquals("0000000000010000", HexFormat.of().formatHex(fields[0]));
        assertEquals("000000000000012c", HexFormat.of().formatHex(fields[1]));
        assertEquals(report, BwReport.of(fields));
        assertEquals(" 65536      300              12.50              11.25  \t\t   0.000176", report.line());
    }

    @Test
    void bufferLayoutCyclesSmallMessagesThroughAPage() {
        BufferLayout small = BufferLayout.of(1000, 4096, 64, true);
        assertEquals(1024, small.stride());
        assertEquals(4, small.slots());
        assertEquals(4096, small.buffSize());
        assertEquals(8192, small.total());
        assertEquals(0, small.offset(0));
        assertEquals(3072, small.offset(3));
        assertEquals(0, small.offset(4));
        assertEquals(1024, small.offset(301));
        assertEquals(4, small.touchedSlots(300));
        assertEquals(2, small.touchedSlots(2));

        BufferLayout big = BufferLayout.of(65536, 4096, 64, true);
        assertFalse(big.cycling());
        assertEquals(65536, big.buffSize());
        assertEquals(0, big.offset(7));
        assertEquals(131072, big.total());

        BufferLayout odd = BufferLayout.of(5000, 4096, 64, true);
        assertEquals(5000, odd.buffSize());
        assertEquals(5056, odd.half());
        assertEquals(64, BufferLayout.inc(2, 64));

        BufferLayout latency = BufferLayout.of(2, 4096, 64, false);
        assertFalse(latency.cycling());
        assertEquals(0, latency.offset(5));
    }

    @Test
    void parametersFollowPerftestDefaultsAndDependencies() {
        PerftestParameters writeBw = new PerftestParameters();
        assertEquals(65536, writeBw.size());
        assertEquals(5000, writeBw.iters());
        assertEquals(128, writeBw.txDepth());
        assertEquals(1, writeBw.cqMod(), "CQ moderation off above 8 KiB");
        assertEquals("ib_write_bw", writeBw.program());

        PerftestParameters small = new PerftestParameters().verb(Verb.READ).size(1000).iters(300);
        assertEquals(100, small.cqMod());
        assertEquals(128, small.outReads());
        assertEquals(1, new PerftestParameters().outReads());

        PerftestParameters send = new PerftestParameters().verb(Verb.SEND).iters(301);
        assertEquals(302, send.rxDepth(), "at most the iterations, then even");
        assertEquals(512, new PerftestParameters().verb(Verb.SEND).rxDepth());
        assertEquals(1000, new PerftestParameters().verb(Verb.SEND).iters());

        PerftestParameters lat = new PerftestParameters().latency(true);
        assertEquals(2, lat.size());
        assertEquals(1000, lat.iters());
        assertEquals(1, lat.txDepth());
        assertEquals("ib_write_lat", lat.program());

        PerftestParameters tiny = new PerftestParameters().iters(5).txDepth(128).cqMod(100).size(64);
        assertEquals(5, tiny.txDepth());
        assertEquals(5, tiny.cqMod());

        assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().latency(true).verb(Verb.READ)
                .validate());
        assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().iters(4).validate());
        assertThrows(IllegalArgumentException.class, () -> new PerftestParameters().verb(Verb.SEND).rxDepth(2)
                .validate());
        assertTrue(new PerftestParameters().verb(Verb.SEND).rxDepth(3).validate().rxDepth() == 4);
    }
}
