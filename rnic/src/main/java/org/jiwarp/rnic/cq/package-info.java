/**
 * Completions (the verbs' completion side of a queue pair): {@link org.jiwarp.rnic.cq.Completions}
 * counts each work queue's entries against its depth and reports work completions to the completion
 * queues through the {@link org.jiwarp.rnic.cq.CompletionSink} each queue gives it, in posting order
 * (RFC 5040 section 5.5); {@link org.jiwarp.rnic.cq.AsyncEvents} carries async events to their
 * listeners. {@link org.jiwarp.rnic.cq.PostedReceives} holds a shared receive queue's receives until
 * its queue pairs take them, and {@link org.jiwarp.rnic.cq.ReceivePool} the receive buffers a queue
 * pair (or a shared receive queue) posts again without allocating.
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API.
 */
package org.jiwarp.rnic.cq;
