package org.jiwarp.mpa;

/**
 * Fired (as a user event) once connection setup is done and the FPDU codec is in the pipeline: from
 * here on ULPDUs flow both ways, to the codec's sink once the layer above gives it one ({@link
 * FpduDeframer#deliverTo}, while handling this event), else up the pipeline as {@code ByteBuf}s.
 *
 * @param parameters what was negotiated
 * @param codec      the connection's FPDU codec, or {@code null} where no codec was installed (tests)
 */
public record MpaEstablishedEvent(MpaParameters parameters, FpduCodec codec) {

    public MpaEstablishedEvent(MpaParameters parameters) {
        this(parameters, null);
    }
}
