package org.jiwarp.mpa;

import io.netty.buffer.ByteBuf;

/**
 * Where {@link FpduDeframer} streams ULPDUs once the layer above asks for it ({@link
 * FpduDeframer#streamTo}), instead of passing each one up the pipeline as a buffer: the ULP header
 * as soon as its octets have arrived, then the payload in the pieces the TCP reads bring, then the
 * end once the FPDU's CRC and markers are known good (siw's receive path, {@code siw_qp_rx.c}, works
 * the same way). Called on the channel's event loop, one FPDU at a time, in stream order.
 *
 * <p>For each FPDU exactly one of these sequences happens:
 * <ul>
 *   <li>{@link #begin} answers {@code true}: {@link #payload} for each piece (none for an empty
 *       payload), then {@link #end} once the CRC is good;</li>
 *   <li>{@link #begin} answers {@code false}, or the ULPDU is shorter than the header asked for:
 *       {@link #whole} with the whole ULPDU once the CRC is good.</li>
 * </ul>
 * A bad CRC or marker stops the sequence where it is (no {@link #end}, no {@link #whole}) and the
 * deframer raises its {@link MpaException} down the pipeline as before. What a streamed FPDU placed
 * before its CRC failed stays where it was placed; see {@link FpduDeframer} for why RFC 5044 and
 * RFC 5041 allow it.
 */
public interface UlpduSink {

    /**
     * How many octets of the ULPDU the sink needs before it can check it and say where its payload
     * goes (a DDP header: 14 tagged, 18 untagged), from the ULPDU's first octet.
     */
    int headerLength(int firstOctet);

    /**
     * The ULPDU's first {@link #headerLength} octets have arrived (the buffer's readable bytes, valid
     * until the FPDU ends; the sink does not release it).
     *
     * @param ulpduLength the ULPDU's length, header included
     * @return {@code true} to take the payload in pieces, {@code false} to take the ULPDU whole
     */
    boolean begin(ByteBuf header, int ulpduLength);

    /** {@code length} octets of payload at {@code index} of {@code source}, in order (not to be kept). */
    void payload(ByteBuf source, int index, int length);

    /** The FPDU whose payload was streamed passed its CRC and marker checks. */
    void end();

    /** A ULPDU not streamed, whole and checked (its readable bytes; not to be kept or released). */
    void whole(ByteBuf ulpdu);
}
