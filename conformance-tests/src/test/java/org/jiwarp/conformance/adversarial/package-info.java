/**
 * The adversarial peer: a raw TCP client (and server) that speaks MPA, DDP and RDMAP by hand with
 * the wire codecs and sends a real jiwarp {@code Rnic} over loopback what a broken or hostile peer
 * would, one catalogue case at a time (RFC 5044 sections 7-8, RFC 5041 section 7, RFC 5040 sections
 * 4.8 and 7, RFC 6581 section 9).
 *
 * <p>{@link org.jiwarp.conformance.adversarial.AdversarialCatalogue} lists the cases: each names its
 * RFC section, what to send and the exact outcome (a Terminate with its layer, error type, code and
 * carried headers, or a close with the MPA error), and, where jiwarp does not do what the RFC says,
 * a deviation note; the cases expect jiwarp's behaviour then. {@code CaseRunner} runs each case
 * against a fresh queue pair in a protection domain whose regions sit between guard zones of a
 * patterned arena ({@code JiwarpTarget}), while a second, healthy queue pair on the same RNIC does
 * verified Writes and Sends ({@code HealthyPair}); afterwards no octet outside the case's target may
 * have changed. {@code RnicReceiveFuzzTest} feeds the same set-up fuzzed segments.
 *
 * <p>The black-box stimuli (a case rping's exchange can carry to any implementation) are not here:
 * they are the conformance library's, run against jiwarp in-process by
 * {@code org.jiwarp.conformance.conform.JiwarpRpingConformTest}.
 */
package org.jiwarp.conformance.adversarial;
