package org.jiwarp.capture.check;

import java.util.List;

/**
 * One violation found in a capture.
 *
 * @param rule         what was checked
 * @param frames       the frames that show it, ascending
 * @param conversation the TCP conversation ({@code tcp.stream})
 * @param direction    "source -> destination" of the offending PDUs
 * @param sentence     one sentence saying what is wrong
 * @param quirk        the known implementation quirk this is, or {@code null}
 */
public record Finding(Rule rule, List<Integer> frames, int conversation, String direction, String sentence,
                      String quirk) {

    /** The report line: frames, connection, rule, RFC section, sentence (and quirk). */
    @Override
    public String toString() {
        StringBuilder line = new StringBuilder("frame");
        line.append(frames.size() == 1 ? " " : "s ");
        for (int i = 0; i < frames.size(); i++) {
            line.append(i == 0 ? "" : ",").append(frames.get(i));
        }
        line.append("  conversation ").append(conversation).append(' ').append(direction)
                .append("  [").append(rule.id()).append("] ").append(rule.section()).append(": ").append(sentence);
        if (quirk != null) {
            line.append(" Known quirk: ").append(quirk).append('.');
        }
        return line.toString();
    }
}
