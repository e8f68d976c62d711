/**
 * RDMAP wire formats (RFC 5040 section 4; RFC 7306 section 4.1 opcodes): the control byte and
 * opcodes ({@link org.jiwarp.wire.rdmap.RdmapHeaders}, {@link org.jiwarp.wire.rdmap.RdmapOpcode}),
 * the Read Request header (section 4.4, {@link org.jiwarp.wire.rdmap.ReadRequestHeader}), the
 * Terminate header (section 4.8, {@link org.jiwarp.wire.rdmap.TerminateHeader}), and every
 * Terminate error of RFC 5040 section 7.2, RFC 5041 section 7.2, RFC 5044 section 8 and RFC 6581
 * section 3 ({@link org.jiwarp.wire.rdmap.TerminateError}, {@link org.jiwarp.wire.rdmap.TerminateLayer}).
 */
package org.jiwarp.wire.rdmap;
