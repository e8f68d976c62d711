/**
 * Jazzer fuzz targets for the MPA setup handlers (RFC 5044 section 7.1, RFC 6581), the FPDU
 * deframer (RFC 5044 sections 4-6, 8) and Terminate messages (RFC 5040 section 4.8). CI replays the
 * committed seed corpora; {@code conformance-tests/FUZZING.md} says how to fuzz and for how long.
 * The RNIC receive path's target lives with the adversarial peer it reuses
 * ({@code org.jiwarp.conformance.adversarial.RnicReceiveFuzzTest}).
 */
package org.jiwarp.conformance.fuzz;
