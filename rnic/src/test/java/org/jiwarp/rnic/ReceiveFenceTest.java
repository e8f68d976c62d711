package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.api.Test;

/**
 * A posted receive is fenced like a tagged region, over real TCP: once the memory it points at is
 * deregistered, a Send that selects it writes nothing there. The receive completes with a local
 * protection error, the stream ends with DDP's local catastrophic error (as Linux siw reports a
 * receive whose memory check fails), and the peer reads that Terminate.
 */
class ReceiveFenceTest {

    private static final byte UNTOUCHED = 0x5A;

    @Test
    void aSendPlacesNothingIntoAReceiveWhoseMemoryWasDeregistered() throws Exception {
        for (boolean secondSgeOnly : new boolean[] {false, true}) {
            try (RnicPair pair = new RnicPair(MpaSettings.defaults(), 4096, (config, server) -> config)) {
                ByteBuffer memory = ByteBuffer.allocateDirect(256);
                for (int i = 0; i < memory.capacity(); i++) {
                    memory.put(i, UNTOUCHED);
                }
                MemoryRegion doomed = pair.serverPd.register(memory, Access.LOCAL_WRITE);
                // Either the whole receive lies in the doomed region, or only its second element does.
                ReceiveWorkRequest receive = secondSgeOnly
                        ? new ReceiveWorkRequest(77, new Sge(pair.serverRegion, 0, 16), Sge.of(doomed))
                        : new ReceiveWorkRequest(77, Sge.of(doomed));
                pair.server.postReceive(receive);
                doomed.deregister();

                for (int i = 0; i < 64; i++) {
                    pair.clientRegion.buffer().setByte(i, 0xA5);
                }
                pair.client.postSend(SendWorkRequest.send(5, new Sge(pair.clientRegion, 0, 64)));
                WorkCompletion wc = pair.serverCq.take(10, TimeUnit.SECONDS);
                assertNotNull(wc, "the receive completes");
                assertEquals(77, wc.workRequestId());
                assertEquals(WcStatus.LOCAL_PROTECTION_ERROR, wc.status(), wc.toString());
                for (int i = 0; i < memory.capacity(); i++) {
                    assertEquals(UNTOUCHED, memory.get(i), "octet " + i + " of the deregistered memory");
                }
                pair.server.closeFuture().get(10, TimeUnit.SECONDS);
                pair.client.closeFuture().get(10, TimeUnit.SECONDS);
                assertEquals(TerminateError.DDP_LOCAL_CATASTROPHIC, pair.server.terminateSent());
                assertNotNull(pair.client.terminateReceived(), "the peer reads the Terminate");
                assertEquals(TerminateError.DDP_LOCAL_CATASTROPHIC, pair.client.terminateReceived().error());
            }
        }
    }
}
