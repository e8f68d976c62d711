package org.jiwarp.cli.bench;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The final report: a bandwidth table and a latency table, each with the columns that mean
 * something for it and at most 100 columns wide, a Markdown form of the same, and JSON with the
 * settings as fields and {@code null} for what was not measured. A percentile is shown only when
 * enough samples were taken for it to differ from the maximum (100 for p99, 1000 for p99.9).
 */
public final class BenchReport {

    /** Samples needed before p99 and p99.9 say more than the maximum. */
    static final long SAMPLES_FOR_P99 = 100;
    static final long SAMPLES_FOR_P999 = 1000;

    private static final String BW_HEADER = String.format(Locale.ROOT, "%-6s %-9s %8s %4s %10s %9s %9s %9s %10s %6s %9s",
            "stack", "op", "bytes", "QPs", "iterations", "Gb/s avg", "Gb/s peak", "MB/s avg", "msg/s", "vs TCP",
            "B/KiB");
    private static final String LAT_HEADER = String.format(Locale.ROOT, "%-6s %-9s %8s %4s %10s %9s %9s %9s %9s %6s %9s",
            "stack", "op", "bytes", "QPs", "iterations", "p50 us", "p99 us", "p99.9 us", "max us", "vs TCP", "B/KiB");

    private BenchReport() {
    }

    public static void table(PrintWriter out, String title, List<BenchResult> results) {
        out.println(title);
        List<BenchResult> bandwidth = results.stream().filter(r -> r.spec().mode() == BenchMode.BW).toList();
        List<BenchResult> latency = results.stream().filter(r -> r.spec().mode() == BenchMode.LAT).toList();
        if (!bandwidth.isEmpty()) {
            out.println();
            out.println(BW_HEADER);
            for (BenchResult r : bandwidth) {
                out.println(String.format(Locale.ROOT, "%-6s %-9s %8d %4d %10d %9.2f %9.2f %9.1f %10.0f %6s %9s",
                        r.stack(), opName(r), r.spec().size(), r.connections(), r.messages(), r.gbitPerSecond(),
                        r.peakGbitPerSecond(), r.mibPerSecond(), r.messagesPerSecond(), ratioText(r, results),
                        allocationText(r)));
            }
        }
        if (!latency.isEmpty()) {
            out.println();
            out.println(LAT_HEADER);
            for (BenchResult r : latency) {
                out.println(String.format(Locale.ROOT, "%-6s %-9s %8d %4d %10d %9s %9s %9s %9.2f %6s %9s",
                        r.stack(), opName(r), r.spec().size(), r.connections(), r.messages(),
                        micros(r, 50), micros(r, 99), micros(r, 99.9), r.maxLatencyMicros(), ratioText(r, results),
                        allocationText(r)));
            }
        }
        out.println();
        legend(out, results, "");
        completionLatency(out, bandwidth, "");
        for (BenchResult r : results) {
            if (r.heapPerConnection() >= 0) {
                out.println(String.format(Locale.ROOT, "%s: %d connections idle hold %.1f KiB of heap each",
                        r.stack(), r.connections(), r.heapPerConnection() / 1024.0));
            }
        }
        out.flush();
    }

    /**
     * Bandwidth runs: each signaled message's time from post to completion, over all connections,
     * and with several connections the spread of their slowest completions (how evenly they share
     * the wire).
     */
    private static void completionLatency(PrintWriter out, List<BenchResult> bandwidth, String prefix) {
        for (BenchResult r : bandwidth) {
            if (r.latency().getTotalCount() == 0) {
                continue;
            }
            out.print(prefix);
            out.println(String.format(Locale.ROOT, "Post to completion, %s %s %d B, %d QP%s: p50 %s us, p99 %s us.",
                    r.stack(), opName(r), r.spec().size(), r.connections(), r.connections() == 1 ? "" : "s",
                    micros(r, 50), micros(r, 99)));
            if (r.connectionMax().getTotalCount() > 1) {
                out.println(String.format(Locale.ROOT, "  each QP's slowest completion: median %.2f us, worst %.2f us.",
                        r.connectionMaxMicros(50), r.connectionMaxMicros(100)));
            }
        }
    }

    /** What the columns that are not self-explanatory mean, for the runs shown. */
    private static void legend(PrintWriter out, List<BenchResult> results, String prefix) {
        boolean baseline = results.stream().anyMatch(r -> r.stack().equals("tcp"));
        boolean bw = results.stream().anyMatch(r -> r.spec().mode() == BenchMode.BW);
        boolean lat = results.stream().anyMatch(r -> r.spec().mode() == BenchMode.LAT);
        if (baseline && bw) {
            out.println(prefix + "vs TCP (bandwidth): jiwarp's average bandwidth over plain TCP's; higher is better.");
        }
        if (baseline && lat) {
            out.println(prefix + "vs TCP (latency): jiwarp's p50 over plain TCP's; lower is better.");
        }
        if (lat) {
            out.println(prefix + "Latency: half the round trip (Read, atomics: all of it); p99 needs "
                    + SAMPLES_FOR_P99 + " samples, p99.9 " + SAMPLES_FOR_P999 + " (else -).");
        }
        out.println(prefix + "B/KiB: heap octets allocated per KiB moved, both ends (- when unknown).");
    }

    private static String opName(BenchResult r) {
        return r.spec().op().label() + (r.spec().mode() == BenchMode.LAT ? "-lat" : "-bw");
    }

    /** A percentile in microseconds, or {@code null} with too few samples for it. */
    static Double percentile(BenchResult r, double percentile) {
        long samples = r.latency().getTotalCount();
        if (samples == 0 || percentile > 99.0 && samples < SAMPLES_FOR_P999
                || percentile > 50 && samples < SAMPLES_FOR_P99) {
            return null;
        }
        return r.latencyMicros(percentile);
    }

    private static String micros(BenchResult r, double percentile) {
        Double value = percentile(r, percentile);
        return value == null ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static Double ratioOrNull(BenchResult r, List<BenchResult> results) {
        BenchResult tcp = baselineOf(r, results);
        return r.stack().equals("tcp") || tcp == null ? null : ratio(r, tcp);
    }

    private static String ratioText(BenchResult r, List<BenchResult> results) {
        Double ratio = ratioOrNull(r, results);
        return ratio == null ? "" : String.format(Locale.ROOT, "%.3f", ratio);
    }

    private static String allocationText(BenchResult r) {
        return r.allocatedPerKib() < 0 ? "-" : String.format(Locale.ROOT, "%.1f", r.allocatedPerKib());
    }

    /**
     * jiwarp over TCP: bandwidth for bandwidth runs; for latency runs the p50 latency, jiwarp's
     * over TCP's (so above 1 means slower, as with the "at most 1.2x").
     */
    public static double ratio(BenchResult jiwarp, BenchResult tcp) {
        if (jiwarp.spec().mode() == BenchMode.LAT) {
            double base = tcp.latencyMicros(50);
            return base > 0 ? jiwarp.latencyMicros(50) / base : 0;
        }
        return tcp.bytesPerSecond() > 0 ? jiwarp.bytesPerSecond() / tcp.bytesPerSecond() : 0;
    }

    private static BenchResult baselineOf(BenchResult r, List<BenchResult> results) {
        for (BenchResult other : results) {
            if (other.stack().equals("tcp") && other.spec().op() == r.spec().op()
                    && other.spec().mode() == r.spec().mode() && other.spec().size() == r.spec().size()) {
                return other;
            }
        }
        return null;
    }

    /** The two tables as Markdown, for the README. */
    public static void markdown(PrintWriter out, String title, List<BenchResult> results) {
        out.println("**" + title + "**");
        List<BenchResult> bandwidth = results.stream().filter(r -> r.spec().mode() == BenchMode.BW).toList();
        List<BenchResult> latency = results.stream().filter(r -> r.spec().mode() == BenchMode.LAT).toList();
        if (!bandwidth.isEmpty()) {
            out.println();
            out.println("| stack | op | bytes | QPs | iterations | Gb/s avg | Gb/s peak | MB/s avg | msg/s | vs TCP "
                    + "| B/KiB |");
            out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            for (BenchResult r : bandwidth) {
                out.println(String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %.2f | %.2f | %.1f | %.0f | %s | %s |",
                        r.stack(), opName(r), r.spec().size(), r.connections(), r.messages(), r.gbitPerSecond(),
                        r.peakGbitPerSecond(), r.mibPerSecond(), r.messagesPerSecond(), ratioText(r, results),
                        allocationText(r)));
            }
        }
        if (!latency.isEmpty()) {
            out.println();
            out.println("| stack | op | bytes | QPs | iterations | p50 us | p99 us | p99.9 us | max us | vs TCP | B/KiB |");
            out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            for (BenchResult r : latency) {
                out.println(String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %s | %s | %s | %.2f | %s | %s |",
                        r.stack(), opName(r), r.spec().size(), r.connections(), r.messages(), micros(r, 50),
                        micros(r, 99), micros(r, 99.9), r.maxLatencyMicros(), ratioText(r, results),
                        allocationText(r)));
            }
        }
        out.println();
        legend(out, results, "");
        completionLatency(out, bandwidth, "\n");
        for (BenchResult r : results) {
            if (r.heapPerConnection() >= 0) {
                out.println();
                out.println(String.format(Locale.ROOT, "%s: %d connections idle hold %.1f KiB of heap each.",
                        r.stack(), r.connections(), r.heapPerConnection() / 1024.0));
            }
        }
        out.flush();
    }

    /**
     * The results as one JSON object: {@code settings} as {@code BenchCommand} describes them
     * (insertion order kept), then one object per result; {@code null} stands for what was not
     * measured (a percentile with too few samples, an allocation the JVM did not report, a ratio
     * without a baseline).
     */
    public static void json(PrintWriter out, List<BenchResult> results, Map<String, Object> settings) {
        StringBuilder json = new StringBuilder("{\"settings\":");
        value(json, settings);
        json.append(",\"results\":[");
        for (int i = 0; i < results.size(); i++) {
            BenchResult r = results.get(i);
            Map<String, Object> latency = new LinkedHashMap<>();
            latency.put("p50", percentile(r, 50));
            latency.put("p99", percentile(r, 99));
            latency.put("p99.9", percentile(r, 99.9));
            latency.put("max", r.latency().getTotalCount() == 0 ? null : r.maxLatencyMicros());
            latency.put("samples", r.latency().getTotalCount());
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("stack", r.stack());
            row.put("op", r.spec().op().name().toLowerCase(Locale.ROOT));
            row.put("mode", r.spec().mode().name().toLowerCase(Locale.ROOT));
            row.put("bytes", r.spec().size());
            row.put("connections", r.connections());
            row.put("txDepth", r.spec().txDepth());
            row.put("iterations", r.messages());
            row.put("seconds", r.seconds());
            row.put("gbitPerSecond", r.gbitPerSecond());
            row.put("peakGbitPerSecond", r.peakGbitPerSecond());
            row.put("mbPerSecond", r.mibPerSecond());
            row.put("peakMbPerSecond", r.peakMibPerSecond());
            row.put("messagesPerSecond", r.messagesPerSecond());
            row.put("latencyMicros", latency);
            Map<String, Object> slowest = null;
            if (r.spec().mode() == BenchMode.BW && r.connectionMax().getTotalCount() > 1) {
                slowest = new LinkedHashMap<>();
                slowest.put("median", r.connectionMaxMicros(50));
                slowest.put("worst", r.connectionMaxMicros(100));
            }
            row.put("slowestCompletionPerConnectionMicros", slowest);
            row.put("allocatedBytesPerKib", r.allocatedPerKib() < 0 ? null : r.allocatedPerKib());
            row.put("heapBytesPerIdleConnection", r.heapPerConnection() < 0 ? null : r.heapPerConnection());
            row.put("ratioToTcp", ratioOrNull(r, results));
            json.append(i == 0 ? "" : ",");
            value(json, row);
        }
        out.println(json.append("]}"));
        out.flush();
    }

    /** A JSON value: a map (an object), a string, a number, a boolean or {@code null}. */
    private static void value(StringBuilder json, Object value) {
        if (value == null) {
            json.append("null");
        } else if (value instanceof Map<?, ?> map) {
            json.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                json.append(first ? "" : ",").append(quote(String.valueOf(entry.getKey()))).append(':');
                value(json, entry.getValue());
                first = false;
            }
            json.append('}');
        } else if (value instanceof Double || value instanceof Float) {
            json.append(number(((Number) value).doubleValue()));
        } else if (value instanceof Number || value instanceof Boolean) {
            json.append(value);
        } else {
            json.append(quote(value.toString()));
        }
    }

    private static String number(double value) {
        return Double.isFinite(value) ? String.format(Locale.ROOT, "%.4f", value) : "null";
    }

    private static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
