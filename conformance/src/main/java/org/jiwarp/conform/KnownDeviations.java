package org.jiwarp.conform;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The documented deviations of one implementation: a case that fails for a reason listed here is
 * KNOWN, not FAIL. Read from a file ({@code --known FILE}) of lines {@code CASE-NAME reason}, with
 * {@code #} comments; the name {@code terminate-encoding} covers every Terminate that is right but
 * for its control word's encoding (Linux siw 6.1's little-endian bitfields). Built-in profiles:
 * {@code jiwarp} and {@code siw}.
 */
public final class KnownDeviations {

    /** The pseudo-case for a Terminate that is right but for its control word's encoding. */
    public static final String TERMINATE_ENCODING = "terminate-encoding";

    private final Map<String, String> reasons;

    private KnownDeviations(Map<String, String> reasons) {
        this.reasons = reasons;
    }

    public static KnownDeviations none() {
        return new KnownDeviations(Map.of());
    }

    /** Reads a deviations file. */
    public static KnownDeviations read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /** A built-in profile by name, or {@code null}. */
    public static KnownDeviations profile(String name) throws IOException {
        var in = KnownDeviations.class.getResourceAsStream("known-" + name + ".txt");
        if (in == null) {
            return null;
        }
        try (in) {
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
        }
    }

    static KnownDeviations parse(String text, String source) {
        Map<String, String> reasons = new LinkedHashMap<>();
        int number = 0;
        for (String line : text.split("\n")) {
            number++;
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            int space = trimmed.indexOf(' ');
            if (space < 0) {
                throw new IllegalArgumentException(source + " line " + number + " names a case but gives no reason");
            }
            reasons.put(trimmed.substring(0, space), trimmed.substring(space + 1).strip());
        }
        return new KnownDeviations(reasons);
    }

    /** Both sets of deviations. */
    public KnownDeviations and(KnownDeviations other) {
        Map<String, String> both = new LinkedHashMap<>(reasons);
        both.putAll(other.reasons);
        return new KnownDeviations(both);
    }

    /** The names this lists (cases and {@code terminate-encoding}). */
    public java.util.Set<String> names() {
        return reasons.keySet();
    }

    /** Why a failure of {@code caseName} is known, or {@code null} when it is not. */
    String reason(String caseName, boolean encodingOnly) {
        String reason = reasons.get(caseName);
        if (reason == null && encodingOnly) {
            reason = reasons.get(TERMINATE_ENCODING);
        }
        return reason;
    }
}
