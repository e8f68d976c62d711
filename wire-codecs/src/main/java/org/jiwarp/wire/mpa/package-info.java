/**
 * MPA wire formats: Request and Reply frames (RFC 5044 section 7.1,
 * {@link org.jiwarp.wire.mpa.MpaFrames}), the RFC 6581 section 3 IRD/ORD words
 * ({@link org.jiwarp.wire.mpa.MpaEnhanced}), FPDUs with pad and CRC-32C (RFC 5044 sections 4.1 and
 * 4.4, {@link org.jiwarp.wire.mpa.Fpdu}), markers (section 4.3, {@link org.jiwarp.wire.mpa.Markers}),
 * MULPDU (section 5.2), and a simple copying FPDU writer and reader for captures and tests
 * ({@link org.jiwarp.wire.mpa.FpduWriter}, {@link org.jiwarp.wire.mpa.FpduReader}). MPA's Terminate
 * error codes (LLP layer) are in {@link org.jiwarp.wire.rdmap.TerminateError}.
 */
package org.jiwarp.wire.mpa;
