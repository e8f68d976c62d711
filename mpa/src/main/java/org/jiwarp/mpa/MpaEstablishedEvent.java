package org.jiwarp.mpa;

/**
 * Fired (as a user event) once connection setup is done and the FPDU codec is in the pipeline:
 * from here on, {@code ByteBuf} ULPDUs flow both ways.
 */
public record MpaEstablishedEvent(MpaParameters parameters) {
}
