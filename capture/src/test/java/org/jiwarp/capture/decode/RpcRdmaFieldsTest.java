package org.jiwarp.capture.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The RPC-over-RDMA header decode on cut and damaged headers: never an exception, never a wrong claim. */
class RpcRdmaFieldsTest {

    /** RDMA_MSG: a Read chunk, a Write chunk of two segments, a Reply chunk, then the RPC call's xid. */
    private static final byte[] CALL = call();

    private static byte[] call() {
        ByteBuffer call = ByteBuffer.allocate(128).putInt(0x51).putInt(1).putInt(32).putInt(0)
            .putInt(1).putInt(0).putInt(0xA1).putInt(4096).putLong(0x1000).putInt(0)
            .putInt(1).putInt(2).putInt(0xB1).putInt(100).putLong(0x2000).putInt(0xB2).putInt(200).putLong(0x3000)
            .putInt(0).putInt(1).putInt(1).putInt(0xC1).putInt(8192).putLong(0x4000)
            .putInt(0x51).putInt(0);
        return Arrays.copyOf(call.array(), call.position());
    }

    private static DecodedPdu send(byte[] message) {
        ByteBuffer ulpdu = ByteBuffer.allocate(18 + message.length).put((byte) 0x41).put((byte) 0x43).putInt(0)
                .putInt(0).putInt(1).putInt(0).put(message);
        DecodedPdu pdu = new DecodedPdu(1, 0, "10.0.0.1:1", "10.0.0.2:2", DecodedPdu.Kind.FPDU);
        pdu.octets(ulpdu.array(), new byte[0]);
        return pdu;
    }

    @Test
    void aWholeCallShowsEverySegmentInOrder() {
        DecodedPdu pdu = send(CALL);
        RpcRdmaFields.decode(List.of(pdu));
        assertEquals("0x00000051", pdu.fields().get("rpcordma.xid"));
        assertEquals("0x000000a1,0x000000b1,0x000000b2,0x000000c1", pdu.fields().get("rpcordma.rdma_handle"));
        assertEquals("4096,100,200,8192", pdu.fields().get("rpcordma.rdma_length"));
        assertEquals("2,1", pdu.fields().get("rpcordma.segment_count"));
        assertEquals(List.of(), pdu.problems());
    }

    @Test
    void everyCutBeforeTheRpcXidIsNotTakenForOne() {
        // Wireshark's test needs the header's chunk lists whole and the RPC message's xid after them.
        DecodedPdu upToTheXid = send(Arrays.copyOf(CALL, CALL.length - 4));
        RpcRdmaFields.decode(List.of(upToTheXid));
        assertEquals("0x00000051", upToTheXid.fields().get("rpcordma.xid"));
        for (int length = 0; length < CALL.length - 4; length++) {
            DecodedPdu pdu = send(Arrays.copyOf(CALL, length));
            RpcRdmaFields.decode(List.of(pdu));
            assertFalse(pdu.fields().containsKey("rpcordma.xid"), "cut to " + length + " octets");
        }
    }

    @Test
    void damagedHeadersNeverThrow() {
        Random random = new Random(17);
        int taken = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] message = Arrays.copyOf(CALL, random.nextInt(CALL.length + 1));
            for (int flips = random.nextInt(4); flips >= 0 && message.length > 0; flips--) {
                int word = random.nextInt((message.length + 3) / 4) * 4;
                int value = random.nextBoolean() ? random.nextInt(5) : random.nextInt();
                for (int b = 0; b < 4 && word + b < message.length; b++) {
                    message[word + b] = (byte) (value >>> (24 - 8 * b));
                }
            }
            DecodedPdu pdu = send(message);
            RpcRdmaFields.decode(List.of(pdu));
            taken += pdu.fields().containsKey("rpcordma.xid") ? 1 : 0;
        }
        assertTrue(taken > 0, "no damaged header was still taken for one");
    }
}
