package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jiwarp.conformance.Tshark;
import org.jiwarp.testing.Prerequisites;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The siw peer itself works: it boots, siw0 carries an rping with verification between two
 * processes in the guest, the host reaches a guest listener through the forwarded port, and the
 * capture records that exchange. Nothing of jiwarp is involved yet; the interop tests build on this.
 */
@Tag("siw")
class SiwPeerSmokeTest {

    private static SiwPeer peer;

    @BeforeAll
    static void boot() {
        Prerequisites.require(SiwPeerImage.whyUnavailable());
        SiwPeerImage.ensureBuilt();
        peer = SiwPeer.boot();
        System.out.println("siw peer up in " + peer.bootTime().toMillis() + " ms under " + peer.accel()
                + ", ports " + peer.forwardedPorts() + ", work directory " + peer.workDirectory());
    }

    @AfterAll
    static void shutDown() {
        if (peer != null) {
            peer.close();
        }
    }

    @Test
    void rpingWithVerificationOverSiwInsideTheGuest() {
        String address = SiwPeer.GUEST_ADDRESS;
        try (SiwPeer.Background server = peer.start("rping -s -a " + address + " -C 3 -v -V")) {
            peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
            ExecResult client = peer.run("rping -c -a " + address + " -C 3 -v -V", Duration.ofSeconds(60)).orThrow();
            assertTrue(client.output().contains("ping data: rdma-ping-2"), client::toString);

            ExecResult served = server.await(Duration.ofSeconds(30)).orThrow();
            assertTrue(served.output().contains("server ping data: rdma-ping-2"), served::toString);
        }
    }

    @Test
    void dmesgShowsSiwAttached() {
        String dmesg = peer.dmesg();
        assertTrue(dmesg.contains("SoftiWARP attached"), dmesg);
        ExecResult link = peer.run("rdma link show").orThrow();
        assertTrue(link.output().contains(SiwPeer.DEVICE + "/1 state ACTIVE"), link::toString);
    }

    /**
     * What a hung guest is asked before it is replaced ({@link GuestHang}): the kernel's blocked tasks
     * and CPU backtrace through QEMU's monitor, which needs no answer from the guest's command line.
     */
    @Test
    void theKernelShowsItsBlockedTasksThroughTheMonitor() {
        String dump = peer.blockedTasks();
        assertTrue(dump.contains("sysrq: Show Blocked State"), dump);
        assertTrue(dump.contains("sysrq: Show backtrace of all active CPUs"), dump);
        assertTrue(dump.contains("sysrq: Show State"), dump);
        // Every task's state, kernel threads left out: the guest's init (the command line's shell) stays.
        assertTrue(dump.contains(" pid:1 "), dump);
        assertFalse(dump.contains("task:kthreadd"), dump);
    }

    /** siw answers an MPA Request asking for markers with a Reply that rejects it (R=1, M=0). */
    @Test
    void hostReachesAGuestListenerAndTheCaptureRecordsIt() throws IOException, InterruptedException {
        SiwPeer.Background server = peer.start("rping -s -a " + SiwPeer.GUEST_ADDRESS + " -C 1 -v");
        try {
            peer.awaitListening(SiwPeer.RPING_PORT, Duration.ofSeconds(30));
            byte[] reply = new byte[20];
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), peer.hostPort(SiwPeer.RPING_PORT))) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write("MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII));
                out.write(new byte[] {(byte) 0x80, 0x01, 0x00, 0x00}); // M=1, Rev 1, no private data
                out.flush();
                new DataInputStream(socket.getInputStream()).readFully(reply);
            }
            byte[] key = new byte[16];
            System.arraycopy(reply, 0, key, 0, 16);
            assertArrayEquals("MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII), key);
            assertEquals(0x20, reply[16] & 0xA0, "R set, M clear");
        } finally {
            server.kill(); // siw rejected the connection; rping would wait for another
        }

        Path pcap = peer.pcap();
        assertTrue(Files.size(pcap) > 24, "filter-dump wrote no frames to " + pcap);
        // tshark reads the guest's capture; without it this part skips, or under CI fails.
        Path tshark = Tshark.required();
        Process process = new ProcessBuilder(tshark.toString(), "-n", "-r", pcap.toString(),
                "--disable-protocol", "rpcordma", "--disable-protocol", "smb_direct", "-Y", "iwarp_mpa")
                .redirectErrorStream(true).start();
        String decoded = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "tshark hangs");
        assertTrue(decoded.contains("MPA Request Frame") && decoded.contains("MPA Reply Frame"), decoded);
    }
}
