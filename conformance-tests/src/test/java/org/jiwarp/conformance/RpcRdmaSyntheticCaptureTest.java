package org.jiwarp.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.LinkType;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.capture.pcap.PcapWriter;
import org.jiwarp.capture.pcap.SyntheticTcpCapture;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaFrames;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RPC-over-RDMA headers that jiwarp's own requester never sends, built here and held to tshark:
 * a header split over two DDP segments of one Send, RDMA_MSGP, an RDMA_ERROR with an unknown
 * code, a Send with Invalidate carrying two Write chunks and a Reply chunk; and Sends Wireshark
 * does not take for RPC-over-RDMA (version 2, a Send with Solicited Event, an RDMA_MSG whose RPC
 * xid differs), on which neither shows a field.
 */
class RpcRdmaSyntheticCaptureTest {

    @Test
    void headersAndNonHeadersAgreeWithTshark(@TempDir Path directory) throws IOException {
        Path tshark = Tshark.required();
        Path file = directory.resolve("rpcrdma-synthetic.pcap");
        try (OutputStream out = Files.newOutputStream(file)) {
            PcapWriter writer = new PcapWriter(out, LinkType.ETHERNET, true);
            SyntheticTcpCapture tcp = new SyntheticTcpCapture(writer,
                    new InetSocketAddress(InetAddress.getByName("10.1.0.1"), 40001),
                    new InetSocketAddress(InetAddress.getByName("10.1.0.2"), 7000), 1, 1000);
            tcp.handshake();
            tcp.clientSends(mpa(false));
            tcp.serverSends(mpa(true));
            FpduWriter fpdus = new FpduWriter(true, false);
            byte[] split = header(0x11, 1, 0, new int[] {1, 0, 0xA1, 4096, 0, 0x1000, 0, 0, 0}, 0x11);
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND, 0, false, 1, 0, slice(split, 0, 20)));
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND, 0, true, 1, 20, slice(split, 20, split.length)));
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND, 0, true, 2, 0,
                    header(0x12, 1, 2, new int[] {4096, 1024, 0, 0, 0}, 0x12)));
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND, 0, true, 3, 0, header(0x13, 2, 1, new int[] {0, 0, 0}, -1)));
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND_WITH_SE, 0, true, 4, 0,
                    header(0x14, 1, 1, new int[] {0, 0, 0}, -1)));
            tcp.clientSends(fpdu(fpdus, RdmapOpcode.SEND, 0, true, 5, 0,
                    header(0x15, 1, 0, new int[] {0, 0, 0}, 0x99)));
            FpduWriter back = new FpduWriter(true, false);
            tcp.serverSends(fpdu(back, RdmapOpcode.SEND, 0, true, 1, 0, header(0x16, 1, 4, new int[] {7}, -1)));
            tcp.serverSends(fpdu(back, RdmapOpcode.SEND_WITH_INVALIDATE, 0xB2, true, 2, 0, header(0x17, 1, 1,
                    new int[] {0, 1, 1, 0xB1, 512, 0, 0x2000, 1, 2, 0xB2, 100, 0, 0x3000, 0xB3, 200, 1, 0, 0, 1, 1,
                        0xB4, 8192, 0, 0x4000}, -1)));
            // Two replies in one TCP segment: Wireshark 4.0 dissects the first only.
            tcp.serverSends(concat(fpdu(back, RdmapOpcode.SEND, 0, true, 3, 0, header(0x18, 1, 0, new int[] {0, 0, 0},
                    0x18)), fpdu(back, RdmapOpcode.SEND, 0, true, 4, 0, header(0x19, 1, 0, new int[] {0, 0, 0}, 0x19))));
            tcp.close();
            writer.close();
        }
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(file));
        Map<Integer, Map<String, String>> ours = decode.fieldsByFrame();
        List<String> xids = ours.values().stream().filter(f -> f.containsKey("rpcordma.xid"))
                .map(f -> f.get("rpcordma.xid")).toList();
        assertEquals(List.of("0x00000011", "0x00000012", "0x00000016", "0x00000017", "0x00000018"), xids,
                "the Sends jiwarp shows as RPC-over-RDMA");
        // The second reply of the shared segment keeps its header for jiwarp check, unshown.
        assertEquals(List.of("0x00000019"), decode.pdus().stream().filter(DecodedPdu::rpcRdmaUnshown)
                .map(p -> p.fields().get("rpcordma.xid")).toList(), "the header tshark does not show");
        List<String> summaries = decode.pdus().stream().map(DecodedPdu::summary).filter(s -> s.contains("RPCoRDMA"))
                .map(s -> s.substring(s.indexOf("RPCoRDMA"))).toList();
        assertEquals(List.of("RPCoRDMA RDMA_MSG XID 0x11", "RPCoRDMA RDMA_MSGP XID 0x12", "RPCoRDMA RDMA_ERROR XID 0x16",
                "RPCoRDMA RDMA_NOMSG XID 0x17", "RPCoRDMA RDMA_MSG XID 0x18", "RPCoRDMA RDMA_MSG XID 0x19"), summaries, "the decode's one-line summaries");
        List<String> mismatches = FieldComparison.mismatches(tshark, file);
        assertEquals(List.of(), mismatches, mismatches.size() + " disagreement(s) with tshark");
    }

    /** xid, version, credits, procedure, the given words, then an RPC xid unless it is -1. */
    private static byte[] header(int xid, int version, int procedure, int[] words, int rpcXid) {
        ByteBuf out = Unpooled.buffer();
        out.writeInt(xid).writeInt(version).writeInt(32).writeInt(procedure);
        for (int word : words) {
            out.writeInt(word);
        }
        if (rpcXid != -1) {
            out.writeInt(rpcXid).writeInt(0).writeInt(2).writeInt(100003);
        }
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    private static byte[] concat(byte[] first, byte[] second) {
        byte[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    private static byte[] slice(byte[] bytes, int from, int to) {
        return Arrays.copyOfRange(bytes, from, to);
    }

    private static byte[] mpa(boolean reply) {
        ByteBuf out = Unpooled.buffer();
        MpaFrames.write(out, reply, MpaFrames.CRC_FLAG, 1, null);
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    private static byte[] fpdu(FpduWriter writer, RdmapOpcode opcode, int invalidate, boolean last, long msn,
            long offset, byte[] payload) {
        ByteBuf ulpdu = Unpooled.buffer();
        DdpHeaders.writeUntagged(ulpdu, last, RdmapHeaders.controlByte(opcode), invalidate, 0, msn, offset);
        ulpdu.writeBytes(payload);
        ByteBuf out = Unpooled.buffer();
        writer.write(ulpdu, out);
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        ulpdu.release();
        return bytes;
    }
}
