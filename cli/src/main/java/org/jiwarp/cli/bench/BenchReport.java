package org.jiwarp.cli.bench;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/** The final table (perftest's columns plus latency percentiles and the ratio to TCP) and its JSON form. */
public final class BenchReport {

    private BenchReport() {
    }

    public static void table(PrintWriter out, String title, List<BenchResult> results) {
        out.println(title);
        out.println(String.format(Locale.ROOT, "%-7s %-10s %8s %10s %9s %9s %9s %9s %10s %9s %9s %9s %9s %7s %9s",
                "stack", "op", "bytes", "iterations", "Gb/s avg", "Gb/s peak", "MB/s avg", "MB/s peak",
                "msg/s", "p50 us", "p99 us", "p99.9 us", "max us", "ratio", "alloc B/KiB"));
        for (BenchResult r : results) {
            BenchResult tcp = baselineOf(r, results);
            String ratio = r.stack().equals("tcp") || tcp == null ? "" : String.format(Locale.ROOT, "%.3f", ratio(r, tcp));
            out.println(String.format(Locale.ROOT,
                    "%-7s %-10s %8d %10d %9.2f %9.2f %9.1f %9.1f %10.0f %9.2f %9.2f %9.2f %9.2f %7s %9.3f",
                    r.stack(), r.spec().op().name().toLowerCase(Locale.ROOT) + (r.spec().mode() == BenchMode.LAT
                            ? "-lat" : "-bw"), r.spec().size(), r.messages(), r.gbitPerSecond(),
                    r.peakGbitPerSecond(), r.mibPerSecond(), r.peakMibPerSecond(), r.messagesPerSecond(),
                    r.latencyMicros(50), r.latencyMicros(99), r.latencyMicros(99.9), r.maxLatencyMicros(), ratio,
                    r.allocatedPerKib()));
        }
        for (BenchResult r : results) {
            if (r.heapPerConnection() >= 0) {
                out.println(String.format(Locale.ROOT, "%s: %d connections idle hold %.1f KiB of heap each",
                        r.stack(), r.connections(), r.heapPerConnection() / 1024.0));
            }
        }
        out.flush();
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

    /** The table as Markdown, one row per result, for the README. */
    public static void markdown(PrintWriter out, String title, List<BenchResult> results) {
        out.println("**" + title + "**");
        out.println();
        out.println("| stack | op | bytes | QPs | iterations | Gb/s avg | Gb/s peak | MB/s avg | msg/s | p50 us | p99 us "
                + "| p99.9 us | max us | ratio to TCP | alloc B/KiB |");
        out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (BenchResult r : results) {
            BenchResult tcp = baselineOf(r, results);
            String ratio = r.stack().equals("tcp") || tcp == null ? "" : String.format(Locale.ROOT, "%.3f", ratio(r, tcp));
            out.println(String.format(Locale.ROOT,
                    "| %s | %s | %d | %d | %d | %.2f | %.2f | %.1f | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %.2f |",
                    r.stack(), r.spec().op().name().toLowerCase(Locale.ROOT) + (r.spec().mode() == BenchMode.LAT
                            ? "-lat" : "-bw"), r.spec().size(), r.connections(), r.messages(), r.gbitPerSecond(),
                    r.peakGbitPerSecond(), r.mibPerSecond(), r.messagesPerSecond(), r.latencyMicros(50),
                    r.latencyMicros(99), r.latencyMicros(99.9), r.maxLatencyMicros(), ratio, r.allocatedPerKib()));
        }
        for (BenchResult r : results) {
            if (r.heapPerConnection() >= 0) {
                out.println();
                out.println(String.format(Locale.ROOT, "%s: %d connections idle hold %.1f KiB of heap each.",
                        r.stack(), r.connections(), r.heapPerConnection() / 1024.0));
            }
        }
        out.flush();
    }

    public static void json(PrintWriter out, List<BenchResult> results, String settings) {
        StringBuilder json = new StringBuilder("{\"settings\":").append(quote(settings)).append(",\"results\":[");
        for (int i = 0; i < results.size(); i++) {
            BenchResult r = results.get(i);
            BenchResult tcp = baselineOf(r, results);
            json.append(i == 0 ? "" : ",").append('{')
                    .append("\"stack\":").append(quote(r.stack()))
                    .append(",\"op\":").append(quote(r.spec().op().name().toLowerCase(Locale.ROOT)))
                    .append(",\"mode\":").append(quote(r.spec().mode().name().toLowerCase(Locale.ROOT)))
                    .append(",\"bytes\":").append(r.spec().size())
                    .append(",\"connections\":").append(r.connections())
                    .append(",\"txDepth\":").append(r.spec().txDepth())
                    .append(",\"iterations\":").append(r.messages())
                    .append(",\"seconds\":").append(number(r.seconds()))
                    .append(",\"gbitPerSecond\":").append(number(r.gbitPerSecond()))
                    .append(",\"peakGbitPerSecond\":").append(number(r.peakGbitPerSecond()))
                    .append(",\"mbPerSecond\":").append(number(r.mibPerSecond()))
                    .append(",\"peakMbPerSecond\":").append(number(r.peakMibPerSecond()))
                    .append(",\"messagesPerSecond\":").append(number(r.messagesPerSecond()))
                    .append(",\"latencyMicros\":{\"p50\":").append(number(r.latencyMicros(50)))
                    .append(",\"p99\":").append(number(r.latencyMicros(99)))
                    .append(",\"p99.9\":").append(number(r.latencyMicros(99.9)))
                    .append(",\"max\":").append(number(r.maxLatencyMicros())).append('}')
                    .append(",\"allocatedBytesPerKib\":").append(number(r.allocatedPerKib()))
                    .append(",\"heapBytesPerIdleConnection\":").append(r.heapPerConnection());
            if (!r.stack().equals("tcp") && tcp != null) {
                json.append(",\"ratioToTcp\":").append(number(ratio(r, tcp)));
            }
            json.append('}');
        }
        out.println(json.append("]}"));
        out.flush();
    }

    private static String number(double value) {
        return String.format(Locale.ROOT, "%.4f", value);
    }

    private static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
