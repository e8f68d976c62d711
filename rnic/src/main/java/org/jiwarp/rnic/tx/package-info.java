/**
 * The transmit side of a connection (Linux siw's {@code siw_qp_tx.c}): the send queue
 * ({@link org.jiwarp.rnic.tx.SendQueue}) issues posted work in order, holds fenced work and Reads
 * beyond the ORD (RFC 5040 sections 5.2 and 5.5) and completes it in posting order, once
 * {@link org.jiwarp.rnic.tx.WrittenToTcp} says it has reached TCP; the
 * {@link org.jiwarp.rnic.tx.SendScheduler} says when the send side runs (posts, work rung from other
 * threads through the {@link org.jiwarp.rnic.tx.Doorbell}, resumption once the connection drained);
 * the segments RDMAP builds go to the connection through the
 * {@link org.jiwarp.rnic.tx.SegmentWriter}, which also says whether the connection takes more (its
 * write bound, and the fairness among queue pairs sharing an event loop).
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API.
 */
package org.jiwarp.rnic.tx;
