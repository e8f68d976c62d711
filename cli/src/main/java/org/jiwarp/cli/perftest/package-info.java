/**
 * {@code jiwarp perftest}: perftest's command line over {@link org.jiwarp.tools.perftest}. Every
 * perftest 4.5 flag is known: those jiwarp runs take their values as perftest does, the others are
 * refused in one sentence naming the flag and why ({@link org.jiwarp.cli.perftest.PerftestFlags}).
 */
package org.jiwarp.cli.perftest;
