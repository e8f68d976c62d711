/**
 * The conformance library's cases ({@code org.jiwarp.conform}, the ones {@code jiwarp conform} runs
 * against any implementation) run in-process against jiwarp's own rping, in both roles, with what
 * only a run inside jiwarp's JVM can see checked around each case: that jiwarp ended every
 * connection, that its queue pairs report the Terminate the wire carried and no other, that no
 * completion queue overran, and that rping still serves a well-behaved client.
 *
 * <p>The stimulus and the verdict live once, in the library; white-box cases that need jiwarp's verbs
 * (atomics, windows, invalidation, chosen regions between guard zones) are the adversarial
 * catalogue's ({@code org.jiwarp.conformance.adversarial}).
 */
package org.jiwarp.conformance.conform;
