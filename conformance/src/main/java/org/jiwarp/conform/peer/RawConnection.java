package org.jiwarp.conform.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jiwarp.wire.crc.Crc32c;
import org.jiwarp.wire.ddp.DdpHeaders;
import org.jiwarp.wire.mpa.FpduReader;
import org.jiwarp.wire.mpa.FpduWriter;
import org.jiwarp.wire.rdmap.RdmapHeaders;
import org.jiwarp.wire.rdmap.RdmapOpcode;

/**
 * One end of a TCP connection that speaks MPA by hand: a blocking {@link Socket}, the MPA startup
 * frames read and written as raw octets, then FPDUs framed with {@link FpduWriter} (whose output a
 * case may tamper with before it goes out) and read back with {@link FpduReader} on a reader thread.
 *
 * <p>Every inbound ULPDU is checked (its CRC when CRCs are on, its markers when the peer inserts
 * them) and kept as a copy; Read Responses, which a case may provoke by the megabyte, keep only
 * their header (when longer than 4 KiB) and add their payload length to a counter. Whatever the
 * remote end sends that is not a valid FPDU is recorded as a problem, which {@link #problems()}
 * reports.
 */
public final class RawConnection implements AutoCloseable {

    private static final int READ_CHUNK = 8192;
    /** Read Responses up to this length are kept whole; longer ones by their header only. */
    private static final int KEEP_WHOLE = 4096;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final Object lock = new Object();
    private final List<byte[]> ulpdus = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private long readResponseOctets;
    /** What arrived before the remote end's first Terminate: Read Response payload octets, and anything else. */
    private long readResponseOctetsBeforeTerminate;
    private final List<byte[]> otherBeforeTerminate = new ArrayList<>();
    private boolean terminateSeen;
    /** The Read Requests this peer framed, in order. */
    private final List<byte[]> readRequestsSent = new ArrayList<>();
    private boolean eof;
    private boolean reset;
    private volatile boolean paused;
    private volatile boolean closing;
    private FpduWriter writer;
    private boolean crc;
    private Thread reader;

    public RawConnection(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    public Socket socket() {
        return socket;
    }

    /** Writes raw octets. */
    public void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Reads exactly {@code n} octets within {@code millis}; throws {@link EOFException} when the peer closed. */
    public byte[] readExactly(int n, long millis) throws IOException {
        byte[] buf = new byte[n];
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        int filled = 0;
        while (filled < n) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new SocketTimeoutException("read " + filled + " of " + n + " octets in " + millis + " ms");
            }
            socket.setSoTimeout((int) Math.max(1, left));
            int r = in.read(buf, filled, n - filled);
            if (r < 0) {
                throw new EOFException("closed after " + filled + " of " + n + " octets");
            }
            filled += r;
        }
        return buf;
    }

    /** Reads an MPA Request or Reply by hand; throws {@link EOFException} when the peer closed instead. */
    public MpaBytes.Parsed readMpaFrame(long millis) throws IOException {
        byte[] header = readExactly(20, millis);
        int length = (header[18] & 0xFF) << 8 | header[19] & 0xFF;
        return MpaBytes.Parsed.of(header, readExactly(length, millis));
    }

    /**
     * Waits until the peer closes the connection (FIN or RST) and nothing arrives before it; for
     * the startup phase, before {@link #startFullOperation}.
     *
     * @return the octets that arrived before the close
     */
    public byte[] readUntilClosed(long millis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new AssertionError("the connection is still open after " + millis + " ms; received "
                        + ByteBufUtil.hexDump(got.toByteArray()));
            }
            socket.setSoTimeout((int) Math.max(1, left));
            int r;
            try {
                r = in.read(buf);
            } catch (SocketTimeoutException e) {
                continue;
            } catch (IOException e) {
                return got.toByteArray(); // reset
            }
            if (r < 0) {
                return got.toByteArray();
            }
            got.write(buf, 0, r);
        }
    }

    /**
     * Switches to full operation: FPDUs from here on, with CRCs as negotiated and markers per
     * direction, and a reader thread collecting what arrives.
     */
    public void startFullOperation(boolean crcEnabled, boolean markersToPeer, boolean markersFromPeer) {
        this.crc = crcEnabled;
        this.writer = new FpduWriter(crcEnabled, markersToPeer);
        FpduReader fpduReader = new FpduReader(markersFromPeer);
        reader = new Thread(() -> readLoop(fpduReader, markersFromPeer), "raw-peer-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Whether MPA setup completed on this connection ({@link #startFullOperation} was called). */
    public boolean inFullOperation() {
        return writer != null;
    }

    /**
     * Frames {@code ulpdu} as the next FPDU and returns its octets without sending them.
     *
     * @throws IllegalStateException before full operation: there is no FPDU framing yet
     */
    public byte[] frame(byte[] ulpdu) {
        if (writer == null) {
            throw new IllegalStateException("MPA setup did not complete on this connection, so no FPDU can be sent");
        }
        if (Ulpdus.isUntagged(ulpdu, RdmapOpcode.RDMA_READ_REQUEST, DdpHeaders.QN_READ_REQUEST)) {
            synchronized (lock) {
                readRequestsSent.add(ulpdu.clone());
            }
        }
        ByteBuf u = Unpooled.wrappedBuffer(ulpdu);
        ByteBuf o = Unpooled.buffer(ulpdu.length + 64);
        try {
            writer.write(u, o);
            return ByteBufUtil.getBytes(o);
        } finally {
            u.release();
            o.release();
        }
    }

    /** Frames and sends one ULPDU; returns it (the offending octets a Terminate must carry). */
    public byte[] send(byte[] ulpdu) throws IOException {
        write(frame(ulpdu));
        return ulpdu;
    }

    /** Frames every ULPDU and sends them in one write. */
    public void sendAll(byte[]... ulpduList) throws IOException {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (byte[] ulpdu : ulpduList) {
            all.writeBytes(frame(ulpdu));
        }
        write(all.toByteArray());
    }

    /** Recomputes the CRC of an FPDU (as {@link #frame} returned it) after a case changed its octets. */
    public static byte[] recrc(byte[] fpdu) {
        int value = Crc32c.compute(fpdu, 0, fpdu.length - 4);
        fpdu[fpdu.length - 4] = (byte) value;
        fpdu[fpdu.length - 3] = (byte) (value >>> 8);
        fpdu[fpdu.length - 2] = (byte) (value >>> 16);
        fpdu[fpdu.length - 1] = (byte) (value >>> 24);
        return fpdu;
    }

    public boolean crc() {
        return crc;
    }

    /** Stops reading from the socket (so that the kernel's receive buffer fills and the peer blocks). */
    public void pauseReading() {
        paused = true;
    }

    public void resumeReading() {
        paused = false;
    }

    private void readLoop(FpduReader fpduReader, boolean markers) {
        ByteBuf cumulation = Unpooled.buffer(64 * 1024);
        byte[] chunk = new byte[READ_CHUNK];
        try {
            socket.setSoTimeout(20);
            while (!closing) {
                if (paused) {
                    Thread.sleep(1);
                    continue;
                }
                int r;
                try {
                    r = in.read(chunk);
                } catch (SocketTimeoutException e) {
                    continue;
                }
                if (r < 0) {
                    break;
                }
                cumulation.writeBytes(chunk, 0, r);
                FpduReader.Frame frame;
                while ((frame = fpduReader.read(cumulation)) != null) {
                    accept(frame, markers);
                }
                cumulation.discardReadBytes();
            }
            synchronized (lock) {
                eof = true;
                if (cumulation.isReadable()) {
                    problems.add(cumulation.readableBytes() + " octets of a partial FPDU before the close");
                }
                lock.notifyAll();
            }
        } catch (IOException e) {
            synchronized (lock) {
                reset = true;
                lock.notifyAll();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            cumulation.release();
        }
    }

    private void accept(FpduReader.Frame frame, boolean markers) {
        synchronized (lock) {
            if (crc && !frame.crcGood()) {
                problems.add(String.format("jiwarp sent an FPDU with a bad CRC: field 0x%08x, computed 0x%08x",
                        frame.crcField, frame.crcComputed));
            }
            if (markers && !frame.markersValid) {
                problems.add("jiwarp sent an FPDU with a wrong marker at stream position " + frame.streamPosition);
            }
            byte[] ulpdu = frame.ulpdu;
            ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
            try {
                if (ulpdu.length >= DdpHeaders.TAGGED_HEADER_LENGTH && DdpHeaders.tagged(b, 0)
                        && RdmapHeaders.opcode(b, 0) == RdmapOpcode.RDMA_READ_RESPONSE) {
                    readResponseOctets += ulpdu.length - DdpHeaders.TAGGED_HEADER_LENGTH;
                    if (!terminateSeen) {
                        readResponseOctetsBeforeTerminate += ulpdu.length - DdpHeaders.TAGGED_HEADER_LENGTH;
                    }
                    if (ulpdu.length > KEEP_WHOLE) {
                        ulpdu = java.util.Arrays.copyOf(ulpdu, DdpHeaders.TAGGED_HEADER_LENGTH);
                    }
                }
            } finally {
                b.release();
            }
            if (Ulpdus.isTerminate(ulpdu)) {
                terminateSeen = true;
            } else if (!terminateSeen && !Ulpdus.isTagged(ulpdu, RdmapOpcode.RDMA_READ_RESPONSE)) {
                otherBeforeTerminate.add(ulpdu);
            }
            ulpdus.add(ulpdu);
            lock.notifyAll();
        }
    }

    /** The first ULPDU received that matches, waiting up to {@code millis}; {@code null} if none came. */
    public byte[] await(Predicate<byte[]> match, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (lock) {
            while (true) {
                for (byte[] ulpdu : ulpdus) {
                    if (match.test(ulpdu)) {
                        return ulpdu;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || eof || reset) {
                    return null;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
        }
    }

    /** Waits until the peer has closed (FIN or RST); {@code false} after {@code millis}. */
    public boolean awaitClosed(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (lock) {
            while (!eof && !reset) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    /** Every ULPDU received so far (Read Responses by their header only). */
    public List<byte[]> received() {
        synchronized (lock) {
            return new ArrayList<>(ulpdus);
        }
    }

    public long readResponseOctets() {
        synchronized (lock) {
            return readResponseOctets;
        }
    }

    /** Read Response payload octets that arrived before the remote end's first Terminate. */
    public long readResponseOctetsBeforeTerminate() {
        synchronized (lock) {
            return readResponseOctetsBeforeTerminate;
        }
    }

    /** ULPDUs other than Read Responses that arrived before the remote end's first Terminate. */
    public List<byte[]> otherBeforeTerminate() {
        synchronized (lock) {
            return new ArrayList<>(otherBeforeTerminate);
        }
    }

    /** The Read Requests this peer sent (framed), in order. */
    public List<byte[]> readRequestsSent() {
        synchronized (lock) {
            return new ArrayList<>(readRequestsSent);
        }
    }

    public List<String> problems() {
        synchronized (lock) {
            return new ArrayList<>(problems);
        }
    }

    /** Half-closes: FIN to the peer, reading goes on. */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** Resets the connection: SO_LINGER 0, then close, so TCP sends RST. */
    public void reset() throws IOException {
        socket.setSoLinger(true, 0);
        closing = true;
        socket.close();
    }

    @Override
    public void close() {
        closing = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        if (reader != null) {
            try {
                reader.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A short description of what arrived, for assertion messages. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        for (byte[] ulpdu : received()) {
            s.append(ByteBufUtil.hexDump(ulpdu, 0, Math.min(ulpdu.length, 24))).append(' ');
        }
        synchronized (lock) {
            s.append("(+").append(readResponseOctets).append(" Read Response octets)");
            s.append(eof ? ", closed" : reset ? ", reset" : ", open");
        }
        return s.toString();
    }
}
