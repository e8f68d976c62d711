package org.jiwarp.conformance.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.jiwarp.rdmap.TerminateMessages;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.jiwarp.wire.rdmap.ReadRequestHeader;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateHeader;

/**
 * Writes the committed seed corpora of the fuzz targets, field by field in the layout each target's
 * javadoc gives. Run from the module directory after changing an input layout:
 *
 * <pre>
 *   java -cp target/test-classes:$(cat cp.txt) org.jiwarp.conformance.fuzz.FuzzSeeds src/test/resources
 * </pre>
 * (with the test class path from {@code mvn dependency:build-classpath -Dmdep.outputFile=cp.txt
 * -Dmdep.includeScope=test}).
 */
public final class FuzzSeeds {

    private FuzzSeeds() {
    }

    public static void main(String[] args) throws IOException {
        Path resources = Path.of(args.length > 0 ? args[0] : "src/test/resources");
        Path fuzz = resources.resolve("org/jiwarp/conformance/fuzz");
        deframer(fuzz.resolve("FpduDeframerFuzzTestInputs/deframe"));
        terminateRead(fuzz.resolve("TerminateMessagesFuzzTestInputs/read"));
        terminateBuild(fuzz.resolve("TerminateMessagesFuzzTestInputs/buildThenRead"));
        responder(fuzz.resolve("MpaSetupFuzzTestInputs/responder"));
        initiator(fuzz.resolve("MpaSetupFuzzTestInputs/initiator"));
        rnic(resources.resolve("org/jiwarp/conformance/adversarial/RnicReceiveFuzzTestInputs/segments"));
    }

    // ---------------------------------------------------------------------------------------------
    // FpduDeframerFuzzTest#deframe: mode, limit, cut seed, then edits

    private static void deframer(Path dir) throws IOException {
        write(dir, "crc-three-ulpdus-one-write", new FuzzInput.Builder().u8(5).u16(0).u8(0)
                .u8(0).u16(20).bytes(fill(20)).u8(0).u16(0).u8(0).u16(100).bytes(fill(100)).build());
        write(dir, "markers-crc-one-octet-cuts", new FuzzInput.Builder().u8(7).u16(0).u8(1)
                .u8(0).u16(600).bytes(fill(600)).u8(0).u16(30).bytes(fill(30)).u8(0).u16(1000).bytes(fill(1000))
                .build());
        write(dir, "bad-crc", new FuzzInput.Builder().u8(5).u16(0).u8(2)
                .u8(0).u16(40).bytes(fill(40)).u8(0).u16(8).bytes(fill(8)).u8(0xF0).u16(10).u8(1).build());
        write(dir, "bad-marker-fpduptr", new FuzzInput.Builder().u8(7).u16(0).u8(3)
                .u8(0).u16(700).bytes(fill(700)).u8(0xF0).u16(515).u8(4).build());
        write(dir, "ulpdu-over-the-limit", new FuzzInput.Builder().u8(4).u16(64).u8(0)
                .u8(0).u16(10).bytes(fill(10)).u8(0).u16(100).bytes(fill(100)).build());
        write(dir, "raw-garbage", new FuzzInput.Builder().u8(1).u16(0).u8(6)
                .bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).build());
    }

    // ---------------------------------------------------------------------------------------------
    // TerminateMessagesFuzzTest

    private static void terminateRead(Path dir) throws IOException {
        byte[] write = tagged(RdmapOpcode.RDMA_WRITE, 0x1234_5601, 0x1000, 16);
        write(dir, "ddp-invalid-stag", new FuzzInput.Builder().u8(0)
                .bytes(build(TerminateError.DDP_TAGGED_INVALID_STAG, 1, write)).build());
        write(dir, "rdmap-error-with-read-request", new FuzzInput.Builder().u8(2)
                .bytes(new byte[] {9, 9}).bytes(build(TerminateError.RDMAP_INVALID_STAG, 1, readRequest())).build());
        write(dir, "siw-layout", new FuzzInput.Builder().u8(0)
                .bytes(terminate(0x0202_0000, new byte[0])).build());
        write(dir, "llp-crc-error", new FuzzInput.Builder().u8(0)
                .bytes(build(TerminateError.LLP_CRC_ERROR, 7, null)).build());
        write(dir, "too-short", new FuzzInput.Builder().u8(0)
                .bytes(Arrays.copyOf(build(TerminateError.LLP_CRC_ERROR, 1, null), 20)).build());
    }

    private static void terminateBuild(Path dir) throws IOException {
        write(dir, "ddp-error-on-a-write", new FuzzInput.Builder()
                .u8(TerminateError.DDP_TAGGED_INVALID_STAG.ordinal()).u32(1).u8(0)
                .bytes(tagged(RdmapOpcode.RDMA_WRITE, 0x1234_5601, 0x1000, 16)).build());
        write(dir, "rdmap-error-on-a-read-request", new FuzzInput.Builder()
                .u8(TerminateError.RDMAP_INVALID_STAG.ordinal()).u32(2).u8(0).bytes(readRequest()).build());
        write(dir, "llp-error-carries-nothing", new FuzzInput.Builder()
                .u8(TerminateError.LLP_CRC_ERROR.ordinal()).u32(3).u8(0)
                .bytes(tagged(RdmapOpcode.RDMA_WRITE, 1, 0, 4)).build());
        write(dir, "no-offending-segment", new FuzzInput.Builder()
                .u8(TerminateError.RDMAP_UNEXPECTED_OPCODE.ordinal()).u32(0xFFFF_FFFFL).u8(1).build());
        write(dir, "offending-shorter-than-its-header", new FuzzInput.Builder()
                .u8(TerminateError.DDP_LOCAL_CATASTROPHIC.ordinal()).u32(4).u8(0).bytes(new byte[] {0x41, 0x03, 0})
                .build());
    }

    // ---------------------------------------------------------------------------------------------
    // MpaSetupFuzzTest: settings (a, b, IRD, ORD), decision, private data length, cut seed, peer octets

    /** Revision 2, enhanced, CRC ACCEPT, markers ACCEPT. */
    private static final int ENHANCED = 0x02 | 0x04 | 0x10;
    private static final int PEER_TO_PEER = 0x40;

    private static void responder(Path dir) throws IOException {
        write(dir, "enhanced-crc-accepted", settings(ENHANCED, 3, 4, 4).u8(0).u8(2).u8(0)
                .bytes(structured(0x50, 2, 4, 4, false, "hello")).build());
        write(dir, "peer-to-peer-write-rtr-then-fpdus", settings(ENHANCED | PEER_TO_PEER, 7, 4, 4).u8(0).u8(0).u8(5)
                .bytes(structured(0x50, 2, 0x8004, 0x8004, false, ""))
                .bytes(fpdus(true, tagged(RdmapOpcode.RDMA_WRITE, 1, 0, 0),
                        untagged(RdmapOpcode.SEND, DdpHeaders.QN_SEND, 1, 8)))
                .build());
        write(dir, "rejected-by-the-application", settings(ENHANCED, 3, 4, 4).u8(2).u8(3).u8(0)
                .bytes(structured(0x10, 2, 4, 4, false, "no")).build());
        write(dir, "revision-1-accepted-with-ird-ord", settings(0x01 | 0x04 | 0x10, 0, 2, 2).u8(1).u8(0x44).u8(7)
                .bytes(structured(0x00, 1, -1, -1, false, "x")).build());
        write(dir, "not-mpa-at-all", settings(ENHANCED, 3, 4, 4).u8(0).u8(0).u8(0)
                .u8(0).bytes("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).build());
        write(dir, "half-a-request-then-timeout", settings(ENHANCED, 3, 4, 4).u8(4).u8(0).u8(3)
                .u8(0).bytes(Arrays.copyOf(MpaFrames.requestKey(), 10)).build());
        write(dir, "private-data-length-lies", settings(ENHANCED, 3, 4, 4).u8(0).u8(0).u8(0)
                .bytes(structured(0x50, 2, 4, 4, true, "abc")).build());
    }

    private static void initiator(Path dir) throws IOException {
        write(dir, "enhanced-reply", settings(ENHANCED, 3, 4, 4).u8(0).u8(3).u8(0)
                .bytes(structured(0x50, 2, 4, 4, false, "ok"))
                .bytes(fpdus(true, untagged(RdmapOpcode.SEND, DdpHeaders.QN_SEND, 1, 8))).build());
        write(dir, "rejecting-reply", settings(ENHANCED, 3, 4, 4).u8(0).u8(0).u8(0)
                .bytes(structured(0x30, 2, 4, 4, false, "go away")).build());
        write(dir, "reply-ord-above-our-ird", settings(ENHANCED, 3, 2, 2).u8(0).u8(0).u8(9)
                .bytes(structured(0x10, 2, 2, 9, false, "")).build());
        write(dir, "peer-to-peer-reply-read-rtr", settings(ENHANCED | PEER_TO_PEER, 7, 4, 4).u8(0).u8(0).u8(0)
                .bytes(structured(0x10, 2, 0x8004, 0x4004, false, ""))
                .bytes(fpdus(false, tagged(RdmapOpcode.RDMA_READ_RESPONSE, 1, 0, 0))).build());
        write(dir, "request-key-instead-of-reply", settings(ENHANCED, 3, 4, 4).u8(0).u8(0).u8(0)
                .u8(0).bytes(MpaFrames.requestKey()).build());
        write(dir, "no-reply-timeout", settings(0x01 | 0x04 | 0x10, 0, 0, 0).u8(4).u8(0).u8(0).u8(0).build());
    }

    private static FuzzInput.Builder settings(int a, int b, int ird, int ord) {
        return new FuzzInput.Builder().u8(a).u8(b).u8(ird).u8(ord);
    }

    /** A peer frame built from fields: mode, flags, revision, fuzzed length, [words,] private data. */
    private static byte[] structured(int flags, int revision, int irdWord, int ordWord, boolean lie, String data) {
        byte[] privateData = data.getBytes(StandardCharsets.US_ASCII);
        FuzzInput.Builder b = new FuzzInput.Builder()
                .u8(1 | (irdWord >= 0 ? 2 : 0) | (lie ? 4 : 0)).u8(flags).u8(revision).u16(lie ? 400 : 0);
        if (irdWord >= 0) {
            b.u16(irdWord).u16(ordWord);
        }
        return b.u16(privateData.length).bytes(privateData).build();
    }

    // ---------------------------------------------------------------------------------------------
    // RnicReceiveFuzzTest#segments: options, then operations (see the target's javadoc)

    private static final int WRITE_REGION = 0;
    private static final int READ_ONLY = 1;
    private static final int RECEIVE = 3;
    private static final int FOREIGN = 4;
    private static final int SHARED = 6;

    private static void rnic(Path dir) throws IOException {
        write(dir, "write-send-read", new FuzzInput.Builder().u8(1)
                .u8(0x00).u8(WRITE_REGION).u8(0).u16(64 + 100).u16(32)
                .u8(0x01).u8(WRITE_REGION).u8(0).u16(0).u8(16)
                .u8(0x02).u8(READ_ONLY).u8(0).u16(64).u16(100).u32(0xBEEF01).u64(0x5000)
                .build());
        write(dir, "write-to-a-foreign-stag", new FuzzInput.Builder().u8(1)
                .u8(0x00).u8(FOREIGN).u8(0).u16(64).u16(16).build());
        write(dir, "write-past-the-end", new FuzzInput.Builder().u8(0)
                .u8(0x00).u8(WRITE_REGION).u8(200).u16(8).u16(32).build());
        write(dir, "send-with-invalidate-then-write-to-it", new FuzzInput.Builder().u8(1)
                .u8(0x01 | 1 << 4).u8(SHARED).u8(0).u16(0).u8(8)
                .u8(0x00).u8(SHARED).u8(0).u16(64).u16(8).build());
        write(dir, "send-too-long-for-the-receive", new FuzzInput.Builder().u8(1)
                .u8(0x01).u8(RECEIVE).u8(0).u16(0).u8(90).build());
        write(dir, "short-segment", new FuzzInput.Builder().u8(1).u8(0x07).u8(1).u8(0x41).build());
        write(dir, "read-response-unasked", new FuzzInput.Builder().u8(1)
                .u8(0x03).u8(WRITE_REGION).u8(0).u16(64).u16(4).build());
        write(dir, "terminate-from-the-peer", new FuzzInput.Builder().u8(1)
                .u8(0x04).u32(1).u32(TerminateHeader.controlWord(TerminateError.LLP_CRC_ERROR, 0)).u8(0).build());
        write(dir, "msn-gap", new FuzzInput.Builder().u8(1)
                .u8(0x01 | 8 << 3).u32(5).u16(0).u8(WRITE_REGION).u8(0).u16(0).u8(4).build());
    }

    // ---------------------------------------------------------------------------------------------

    private static byte[] fill(int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = (byte) (0xA0 + i);
        }
        return out;
    }

    private static byte[] tagged(RdmapOpcode opcode, int stag, long to, int payload) {
        ByteBuf out = Unpooled.buffer();
        try {
            DdpHeaders.writeTagged(out, true, RdmapHeaders.controlByte(opcode), stag, to);
            out.writeBytes(fill(payload));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] untagged(RdmapOpcode opcode, int qn, long msn, int payload) {
        ByteBuf out = Unpooled.buffer();
        try {
            DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(opcode), 0, qn, msn, 0);
            out.writeBytes(fill(payload));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] readRequest() {
        ByteBuf out = Unpooled.buffer();
        try {
            DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.RDMA_READ_REQUEST), 0,
                    DdpHeaders.QN_READ_REQUEST, 1, 0);
            ReadRequestHeader.write(out, 0xC0DE01, 0x7000, 64, 0x1234_5601, 0x1000);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] terminate(int controlWord, byte[] extra) {
        ByteBuf out = Unpooled.buffer();
        try {
            DdpHeaders.writeUntagged(out, true, RdmapHeaders.controlByte(RdmapOpcode.TERMINATE), 0,
                    DdpHeaders.QN_TERMINATE, 1, 0);
            out.writeInt(controlWord);
            out.writeBytes(extra);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] build(TerminateError error, long msn, byte[] offending) {
        ByteBuf o = offending == null ? null : Unpooled.wrappedBuffer(offending);
        ByteBuf t = TerminateMessages.build(ByteBufAllocator.DEFAULT, error, msn, o);
        try {
            return ByteBufUtil.getBytes(t);
        } finally {
            t.release();
            if (o != null) {
                o.release();
            }
        }
    }

    private static byte[] fpdus(boolean crc, byte[]... ulpdus) {
        FpduWriter writer = new FpduWriter(crc, false);
        ByteBuf out = Unpooled.buffer();
        try {
            for (byte[] ulpdu : ulpdus) {
                ByteBuf u = Unpooled.wrappedBuffer(ulpdu);
                try {
                    writer.write(u, out);
                } finally {
                    u.release();
                }
            }
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static void write(Path dir, String name, byte[] bytes) throws IOException {
        Files.createDirectories(dir);
        Files.write(dir.resolve(name), bytes);
    }
}
