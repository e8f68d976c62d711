/**
 * Protocol conformance for jiwarp: tests that hold the stack to software nobody in this project
 * wrote. Today: field-by-field agreement with Wireshark's dissectors (tshark) on external and
 * jiwarp-written captures (RFC 5044 sections 4 and 7, RFC 5041 section 4, RFC 5040 section 4),
 * and the committed sample captures. Later: the RFC requirement matrix (every MUST of RFC 5044,
 * 5041, 5040 and 6581), the adversarial peer, fuzzing and fault injection, and the Linux siw
 * interoperability suite.
 */
package org.jiwarp.conformance;
