package org.jiwarp.capture.decode;

import io.netty.buffer.Unpooled;
import java.util.List;
import org.jiwarp.capture.pcap.StreamChunk;
import org.jiwarp.capture.pcap.TcpDirection;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * One direction's captured bytes laid end to end, in runs: a run is a stretch of the TCP stream
 * the capture holds without a hole, and between two runs lie octets the capture missed.
 *
 * <pre>
 *   stream offsets   0 ........ 4000 | missing 1448 | 5448 ........ 9000 | missing | ...
 *   bytes[] index    0 ........ 4000                  4000 ........ 7552             ...
 *   run              0                                1
 * </pre>
 */
final class CapturedStream {

    final byte[] bytes;
    final String source;
    final String destination;
    /** Index into {@link #bytes} where each run starts, and where it ends. */
    private final int[] runStarts;
    private final int[] runEnds;
    /** Stream offset of each run's first octet. */
    private final long[] runOffsets;
    private final int[] chunkStarts;
    private final int[] chunkFrames;
    /** The MSS the receiving end announced in its SYN (RFC 9293 section 3.2), or 0 when not captured. */
    int receiverMss;
    /** Data the FIN says was sent after the last captured octet. */
    final boolean missingTail;

    CapturedStream(TcpDirection direction, String source, String destination) {
        this(direction.capturedChunks(), direction.hasGap(), source, destination);
    }

    /**
     * The stream of {@code chunks} (in stream order; each chunk whose offset is not the previous
     * one's end starts a run); {@code gap}: the capture misses octets of the stream, as
     * {@link TcpDirection#hasGap()}.
     */
    CapturedStream(List<StreamChunk> chunks, boolean gap, String source, String destination) {
        this.source = source;
        this.destination = destination;
        long total = 0;
        int runs = 0;
        long end = -1;
        for (StreamChunk chunk : chunks) {
            total += chunk.data().length;
            if (chunk.streamOffset() != end) {
                runs++;
            }
            end = chunk.endOffset();
        }
        if (total > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("stream of " + total + " octets is too long to decode");
        }
        bytes = new byte[(int) total];
        chunkStarts = new int[chunks.size()];
        chunkFrames = new int[chunks.size()];
        runStarts = new int[runs];
        runEnds = new int[runs];
        runOffsets = new long[runs];
        int at = 0;
        int run = -1;
        end = -1;
        for (int i = 0; i < chunks.size(); i++) {
            StreamChunk chunk = chunks.get(i);
            if (chunk.streamOffset() != end) {
                run++;
                runStarts[run] = at;
                runOffsets[run] = chunk.streamOffset();
            }
            System.arraycopy(chunk.data(), 0, bytes, at, chunk.data().length);
            chunkStarts[i] = at;
            chunkFrames[i] = chunk.frameNumber();
            at += chunk.data().length;
            runEnds[run] = at;
            end = chunk.endOffset();
        }
        missingTail = gap && runs <= 1;
    }

    int runs() {
        return runStarts.length;
    }

    int runStart(int run) {
        return runStarts[run];
    }

    int runEnd(int run) {
        return runEnds[run];
    }

    /** The end of the first run: all a decoder that does not look past gaps may read. */
    int firstRunEnd() {
        return runStarts.length == 0 ? 0 : runEnds[0];
    }

    /**
     * The run that holds {@code bytes[index]}, or that {@code index} ends: where runs meet, the
     * earlier one (so a position just past a run's last octet belongs to that run, before its gap).
     */
    int runOf(int index) {
        for (int run = 0; run < runStarts.length; run++) {
            if (index <= runEnds[run]) {
                return run;
            }
        }
        return runStarts.length - 1;
    }

    /** The TCP stream offset of {@code bytes[index]}, or of the octet after a run's last one. */
    long streamOffset(int index) {
        int run = runOf(Math.max(index, 0));
        return run < 0 ? index : runOffsets[run] + (index - runStarts[run]);
    }

    /** The TCP stream offset of {@code bytes[index]}, an index inside (or just past) run {@code run}. */
    long streamOffset(int run, int index) {
        return runOffsets[run] + (index - runStarts[run]);
    }

    /** Octets the capture missed between run {@code run} and the next. */
    long missingAfter(int run) {
        return runOffsets[run + 1] - (runOffsets[run] + runEnds[run] - runStarts[run]);
    }

    boolean startsWithRequest() {
        return firstRunEnd() >= MpaFrames.KEY_LENGTH && MpaFrames.isRequest(Unpooled.wrappedBuffer(bytes), 0);
    }

    /**
     * The captured octets from {@code bytes[index]} on, as chunks with the frames that delivered
     * them and their stream offsets: what a decoder that stopped at {@code index} carries over.
     */
    List<StreamChunk> chunksFrom(int index) {
        List<StreamChunk> rest = new java.util.ArrayList<>();
        int run = 0;
        for (int i = 0; i < chunkStarts.length; i++) {
            int start = chunkStarts[i];
            int end = i + 1 < chunkStarts.length ? chunkStarts[i + 1] : bytes.length;
            while (run < runStarts.length - 1 && start >= runEnds[run]) {
                run++;
            }
            if (end <= index || end == start) {
                continue;
            }
            int from = Math.max(start, index);
            rest.add(new StreamChunk(chunkFrames[i], streamOffset(run, from), java.util.Arrays.copyOfRange(bytes, from, end)));
        }
        return rest;
    }

    /** The frame that delivered {@code bytes[index]}. */
    int frameAt(long index) {
        int low = 0;
        int high = chunkStarts.length - 1;
        if (high < 0) {
            return 0;
        }
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (chunkStarts[mid] <= index) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return chunkFrames[low];
    }
}
