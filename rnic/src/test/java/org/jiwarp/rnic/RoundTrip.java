package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.concurrent.TimeUnit;

/**
 * The well-behaved traffic a test runs beside an attacked connection to show that the RNIC's other
 * queue pairs carry on: the client Writes 8 octets into the server's region and Sends 8 more, the
 * server receives the Send and Sends 8 octets back. Every completion and every octet is checked.
 *
 * <p>Uses octets 0 to 71 of each region; work request ids {@code id} to {@code id + 4}. In
 * {@code rnic}'s test-jar, for {@code conformance-tests} too.
 */
public record RoundTrip(QueuePair client, CompletionQueue clientCq, MemoryRegion clientRegion, QueuePair server,
        CompletionQueue serverCq, MemoryRegion serverRegion) {

    private static final long WAIT_SECONDS = 10;

    /** One round trip with work request ids {@code id} to {@code id + 4}. */
    public void run(long id) throws InterruptedException {
        ByteBuf clientMemory = clientRegion.buffer();
        ByteBuf serverMemory = serverRegion.buffer();
        clientMemory.setLong(0, 0x0102030405060708L ^ id);
        clientMemory.setLong(8, 0x1112131415161718L ^ id);
        serverMemory.setLong(24, 0x2122232425262728L ^ id);
        server.postReceive(new ReceiveWorkRequest(id, new Sge(serverRegion, 64, 64)));
        client.postReceive(new ReceiveWorkRequest(id + 1, new Sge(clientRegion, 64, 64)));
        client.postSend(SendWorkRequest.write(id + 2, serverRegion.address() + 16, serverRegion.rkey(),
                new Sge(clientRegion, 0, 8)));
        client.postSend(SendWorkRequest.send(id + 3, new Sge(clientRegion, 8, 8)));
        expectSuccess(clientCq, id + 2, WcOpcode.RDMA_WRITE);
        expectSuccess(clientCq, id + 3, WcOpcode.SEND);
        WorkCompletion received = expectSuccess(serverCq, id, WcOpcode.RECEIVE);
        assertEquals(8, received.byteLength());
        // The Write was placed before the Send that followed it completed (RFC 5040 section 5.5).
        assertEquals(clientMemory.getLong(0), serverMemory.getLong(16), "the Write's octets");
        assertEquals(clientMemory.getLong(8), serverMemory.getLong(64), "the Send's octets");
        server.postSend(SendWorkRequest.send(id + 4, new Sge(serverRegion, 24, 8)));
        expectSuccess(serverCq, id + 4, WcOpcode.SEND);
        expectSuccess(clientCq, id + 1, WcOpcode.RECEIVE);
        assertTrue(ByteBufUtil.equals(serverMemory, 24, clientMemory, 64, 8), "the Send back");
        assertEquals(QpState.RTS, client.state());
        assertEquals(QpState.RTS, server.state());
    }

    private static WorkCompletion expectSuccess(CompletionQueue cq, long id, WcOpcode opcode)
            throws InterruptedException {
        WorkCompletion wc = cq.take(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(wc, "no completion for work request " + id + " within 10 s");
        assertEquals(id, wc.workRequestId(), wc.toString());
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(opcode, wc.opcode(), wc.toString());
        return wc;
    }
}
