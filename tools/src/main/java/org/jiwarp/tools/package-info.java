/**
 * The tools every Linux iWARP device is tried with, spoken byte for byte over jiwarp's verbs in
 * both roles: rdma-core's rping ({@link org.jiwarp.tools.rping}) and linux-rdma's perftest
 * ({@link org.jiwarp.tools.perftest}); their messages are in {@code wire-codecs}. Each tool is an
 * engine with a log and a result; the {@code jiwarp} command adds the options and the output.
 * {@link org.jiwarp.tools.Failures} says what went wrong with a connection or a work request in
 * words, by the RFC's names.
 */
package org.jiwarp.tools;
