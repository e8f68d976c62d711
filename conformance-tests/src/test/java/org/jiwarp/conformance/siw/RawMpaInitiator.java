package org.jiwarp.conformance.siw;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.Arrays;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * A bare MPA initiator on a blocking socket, for sending what no well-behaved stack sends (an FPDU
 * with a wrong CRC) and reading the peer's answer octet by octet. It speaks what siw wants to hear:
 * revision 2, Enhanced, IRD = ORD = 1, no peer-to-peer mode (so no RTR frame, whose bad CRC would
 * crash the guest kernel), CRC when asked.
 *
 * <pre>
 *   connect():  Request (Rev 2, Enhanced [, C], IRD 1 | ORD 1) --&gt;   &lt;-- Reply
 *   send(ulpdu, corrupt):  FPDU = length | ULPDU | pad | CRC (one octet flipped when corrupt) --&gt;
 *   receive():  &lt;-- FPDU, its CRC checked when CRC was negotiated
 * </pre>
 */
final class RawMpaInitiator implements AutoCloseable {

    /** One FPDU received: its ULPDU and whether its CRC field was right (always true without CRC). */
    record Received(byte[] ulpdu, boolean crcGood) {
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final int replyFlags;
    private final int replyRevision;
    private final boolean crc;
    private final FpduWriter writer;

    private RawMpaInitiator(Socket socket, boolean askCrc) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(15_000);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
        ByteBuf privateData = Unpooled.buffer(MpaEnhanced.LENGTH);
        MpaEnhanced.write(privateData, 1, 1, false, false, false, false);
        ByteBuf request = Unpooled.buffer();
        MpaFrames.write(request, false, MpaFrames.ENHANCED_FLAG | (askCrc ? MpaFrames.CRC_FLAG : 0),
                MpaFrames.REVISION_2, privateData);
        out.write(ByteBufUtil.getBytes(request));
        out.flush();
        byte[] header = new byte[MpaFrames.HEADER_LENGTH];
        in.readFully(header);
        if (!Arrays.equals(Arrays.copyOf(header, MpaFrames.KEY_LENGTH), MpaFrames.replyKey())) {
            throw new IOException("not an MPA Reply: " + ByteBufUtil.hexDump(header));
        }
        replyFlags = header[MpaFrames.FLAGS_OFFSET] & 0xFF;
        replyRevision = header[MpaFrames.REVISION_OFFSET] & 0xFF;
        in.readFully(new byte[((header[MpaFrames.PRIVATE_DATA_LENGTH_OFFSET] & 0xFF) << 8)
                | (header[MpaFrames.PRIVATE_DATA_LENGTH_OFFSET + 1] & 0xFF)]);
        // RFC 5044 section 7.1: CRC in both directions when either side sets C.
        this.crc = askCrc || (replyFlags & MpaFrames.CRC_FLAG) != 0;
        this.writer = new FpduWriter(crc, false);
    }

    /** Connects to 127.0.0.1:{@code port} and completes the MPA exchange. */
    static RawMpaInitiator connect(int port, boolean askCrc) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        try {
            return new RawMpaInitiator(socket, askCrc);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    int replyFlags() {
        return replyFlags;
    }

    int replyRevision() {
        return replyRevision;
    }

    boolean crc() {
        return crc;
    }

    /**
     * Frames {@code ulpdu} (released) into one FPDU and sends it, with the most significant octet of
     * its CRC (the last on the wire: the CRC goes little-endian) flipped by {@code corruption} when
     * that is not 0.
     *
     * @return the correct CRC-32C value of the FPDU
     */
    int send(ByteBuf ulpdu, int corruption) throws IOException {
        ByteBuf fpdu = Unpooled.buffer();
        try {
            writer.write(ulpdu, fpdu);
            byte[] bytes = ByteBufUtil.getBytes(fpdu);
            int crcAt = bytes.length - Fpdu.CRC_LENGTH;
            int value = (bytes[crcAt] & 0xFF) | (bytes[crcAt + 1] & 0xFF) << 8 | (bytes[crcAt + 2] & 0xFF) << 16
                    | (bytes[crcAt + 3] & 0xFF) << 24;
            bytes[bytes.length - 1] ^= (byte) corruption;
            out.write(bytes);
            out.flush();
            return value;
        } finally {
            ulpdu.release();
            fpdu.release();
        }
    }

    /** The next FPDU; {@code null} when the peer closed the stream. */
    Received receive() throws IOException {
        int length;
        try {
            length = in.readUnsignedShort();
        } catch (java.io.EOFException e) {
            return null;
        }
        byte[] fpdu = new byte[Fpdu.length(length)];
        fpdu[0] = (byte) (length >> 8);
        fpdu[1] = (byte) length;
        in.readFully(fpdu, Fpdu.HEADER_LENGTH, fpdu.length - Fpdu.HEADER_LENGTH);
        int crcAt = fpdu.length - Fpdu.CRC_LENGTH;
        int received = (fpdu[crcAt] & 0xFF) | (fpdu[crcAt + 1] & 0xFF) << 8 | (fpdu[crcAt + 2] & 0xFF) << 16
                | (fpdu[crcAt + 3] & 0xFF) << 24;
        boolean good = !crc || received == Crc32c.compute(fpdu, 0, crcAt);
        return new Received(Arrays.copyOfRange(fpdu, Fpdu.HEADER_LENGTH, Fpdu.HEADER_LENGTH + length), good);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
