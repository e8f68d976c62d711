/**
 * linux-rdma perftest's control messages over rdma_cm ({@code -R}), as perftest 6.06 encodes them:
 * the 16-octet version field, the big-endian integers and doubles of the parameter and report
 * exchanges, the MTU as a C string, and {@code struct pingpong_dest} in its LP64 layout
 * ({@link org.jiwarp.wire.perftest.PingpongDest}). Not iWARP: the Sends they travel in are. The
 * order of the exchange, and what each end does between messages, is in
 * {@link org.jiwarp.tools.perftest}. {@code jiwarp perftest} and {@code jiwarp conform}'s perftest
 * group both speak it from here.
 */
package org.jiwarp.wire.perftest;
