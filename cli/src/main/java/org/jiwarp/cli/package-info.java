/**
 * The {@code jiwarp} command line (picocli): {@code decode} today; {@code bench} and {@code ping}
 * (perftest- and rping-style tools over the RNIC) follow. Exit codes: 0 success, 1 runtime error,
 * 2 usage error.
 */
package org.jiwarp.cli;
