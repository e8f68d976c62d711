package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The NFS variant of the siw peer serves: nfsd listens for RPC-over-RDMA on 20049 (svcrdma on
 * siw0), rpc.mountd on TCP 20048, both reached from the host through QEMU's forwards.
 */
@Tag("siw")
class SiwNfsPeerTest {

    @Test
    void guestExportsATmpfsOverRdma() throws IOException {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage image = SiwPeerImage.ensureNfsBuilt();
        try (SiwPeer peer = SiwPeer.builder().image(image).forward(NfsGuest.RDMA_PORT).forward(NfsGuest.MOUNT_PORT).boot()) {
            ExecResult serve = peer.run("jw-nfs-serve", Duration.ofSeconds(60));
            System.out.println(serve);
            assertTrue(serve.succeeded() && serve.output().contains("rdma 20049"), serve::toString);
            peer.awaitListening(NfsGuest.RDMA_PORT, Duration.ofSeconds(30));
            peer.awaitListening(NfsGuest.MOUNT_PORT, Duration.ofSeconds(30));
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), peer.hostPort(NfsGuest.MOUNT_PORT))) {
                assertTrue(s.isConnected());
            }
        }
    }
}
