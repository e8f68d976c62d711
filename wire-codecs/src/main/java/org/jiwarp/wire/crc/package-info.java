/**
 * CRC-32C as MPA uses it (RFC 5044 section 6 and Appendix; the polynomial of RFC 3385).
 *
 * <p>{@link org.jiwarp.wire.crc.Crc32c} runs on {@code java.util.zip.CRC32C} (intrinsified on
 * x86-64 and aarch64); {@link org.jiwarp.wire.crc.Crc32cTable} is a small table-driven pure-Java
 * implementation, kept as the fallback and as the oracle the tests check the fast one against.
 * MPA writes the CRC little-endian: see {@link org.jiwarp.wire.mpa.Fpdu}.
 */
package org.jiwarp.wire.crc;
