package org.jiwarp.cli.bench;

/** Bandwidth ({@code ib_*_bw}: a stream of outstanding messages) or latency ({@code ib_*_lat}: ping-pong). */
public enum BenchMode {
    BW,
    LAT
}
