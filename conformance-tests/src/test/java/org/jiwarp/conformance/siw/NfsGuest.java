package org.jiwarp.conformance.siw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jiwarp.capture.check.CaptureChecker;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.IwarpStreamDecoder;
import org.jiwarp.capture.pcap.PcapFile;
import org.jiwarp.conformance.FieldComparison;
import org.jiwarp.conformance.Tshark;

/**
 * Ports and paths of the NFS variant of the siw peer ({@code build-nfs-peer.sh}, {@code nfs-serve.sh}),
 * and what its suites do alike: run {@code jiwarp nfs} against it, hold a capture to tshark and
 * {@code jiwarp check}.
 */
final class NfsGuest {

    /** svcrdma's port: RPC-over-RDMA (RFC 8267 section 9 assigns 20049 to NFS over RDMA). */
    static final int RDMA_PORT = 20049;
    /** rpc.mountd's fixed TCP port. */
    static final int MOUNT_PORT = 20048;
    /** The exported tmpfs. */
    static final String EXPORT = "/srv/nfs";

    private NfsGuest() {
    }

    /** {@code jiwarp nfs ARGS...} against {@code guest}'s forwarded NFS and MOUNT ports. */
    static JiwarpCommand.Run nfs(SiwPeer guest, Object... args) {
        Object[] all = new Object[args.length + 5];
        all[0] = "nfs";
        System.arraycopy(args, 0, all, 1, args.length);
        System.arraycopy(new Object[] {"--port", guest.hostPort(RDMA_PORT), "--mount-port", guest.hostPort(MOUNT_PORT)},
                0, all, 1 + args.length, 4);
        return JiwarpCommand.run(all);
    }

    /**
     * jiwarp's decode of {@code capture}, once it agrees with tshark's field by field (iWARP,
     * {@code rpcordma.*}, CRC verdicts) and {@code jiwarp check} finds nothing in it.
     */
    static CaptureDecode decodedAsTsharkDoesAndClean(Path capture) throws IOException {
        List<String> mismatches = FieldComparison.mismatches(Tshark.required(), capture);
        assertEquals(List.of(), mismatches.subList(0, Math.min(20, mismatches.size())),
                mismatches.size() + " disagreement(s) with tshark on " + capture);
        CaptureDecode decode = IwarpStreamDecoder.decode(PcapFile.read(capture));
        assertEquals(List.of(), CaptureChecker.check(decode), "jiwarp check on " + capture);
        return decode;
    }
}
