package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every enum-typed option of every subcommand, found by walking the command tree: a wrong value is
 * a usage error (exit 2) of one line that lists the values the command's help shows, each of which
 * the option takes, and no Java constant name the user cannot type.
 */
class OptionChoicesTest {

    private static final Pattern LIST = Pattern.compile(
            "^(jiwarp [a-z-]+(?: [a-z-]+)*): invalid value for option '([^']+)'.*: 'no-such-value' is not one of (.+) "
            + "\\(see '\\1 --help'\\)\\R$");

    @Test
    void aWrongValueListsTheValuesTheHelpShows() throws Exception {
        List<String> checked = new ArrayList<>();
        List<CommandLine> lines = new ArrayList<>();
        Jiwarp.forEachCommand(Jiwarp.commandLine(), lines::add);
        for (CommandLine line : lines) {
            CommandLine.Model.CommandSpec spec = line.getCommandSpec();
            for (CommandLine.Model.PositionalParamSpec positional : spec.positionalParameters()) {
                assertFalse(enumType(positional) != null, spec.qualifiedName() + " has an enum parameter: check it too");
            }
            for (CommandLine.Model.OptionSpec option : spec.options()) {
                Class<?> type = enumType(option);
                if (type == null) {
                    continue;
                }
                String name = spec.qualifiedName();
                List<String> args = new ArrayList<>(Arrays.asList(name.split(" ")));
                args.remove(0);
                args.add(option.longestName());
                args.add("no-such-value");
                DecodeCommandTest.Run run = DecodeCommandTest.jiwarp(args.toArray());
                assertEquals(2, run.exit(), name + " " + option.longestName());
                Matcher matcher = LIST.matcher(run.err());
                assertTrue(matcher.matches(), run.err());
                String help = line.getUsageMessage();
                List<String> listed = Arrays.asList(matcher.group(3).replace(" or ", ", ").split(", "));
                for (String value : listed) {
                    assertTrue(help.contains(value), name + " --help does not show " + value + ":\n" + help);
                    assertTrue(type.isInstance(option.converters()[0].convert(value)), value);
                }
                for (Object constant : type.getEnumConstants()) {
                    String constantName = ((Enum<?>) constant).name();
                    assertTrue(listed.stream().anyMatch(v -> v.equalsIgnoreCase(constantName))
                            || !run.err().toUpperCase(Locale.ROOT).contains(constantName), run.err());
                }
                checked.add(name + " " + option.longestName());
            }
        }
        // --transport comes with ConnectionOptions, mixed into every command that opens connections.
        assertEquals(List.of("jiwarp bench --op", "jiwarp bench --transport", "jiwarp ping --transport",
                "jiwarp nfs --transport", "jiwarp nfs serve --transport", "jiwarp perftest --test", "jiwarp perftest --transport",
                "jiwarp conform --group"), checked);
    }

    @Test
    void benchOpRefusesItsInternalValue() {
        DecodeCommandTest.Run run = DecodeCommandTest.jiwarp("bench", "--op", "immediate");
        assertEquals(2, run.exit());
        assertEquals("jiwarp bench: invalid value for option '--op' (write|read|send|atomic): 'immediate' is not one "
                + "of write, read, send, atomic, fetch_add or compare_swap (see 'jiwarp bench --help')\n", run.err());
    }

    /** The enum an option's values convert to (its type, or a list's element type), or null. */
    private static Class<?> enumType(CommandLine.Model.ArgSpec arg) {
        if (arg.type().isEnum()) {
            return arg.type();
        }
        for (Class<?> auxiliary : arg.auxiliaryTypes()) {
            if (auxiliary.isEnum()) {
                return auxiliary;
            }
        }
        return null;
    }
}
