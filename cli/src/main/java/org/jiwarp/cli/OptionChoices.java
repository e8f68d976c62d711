package org.jiwarp.cli;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;

/**
 * The values of an enum-typed option, spelled as the user types them: one list that the option's
 * converter accepts (in any case), that its help shows through {@code ${COMPLETION-CANDIDATES}},
 * that bash completion offers, and that a wrong value's error names in one sentence
 * ({@code 'foo' is not one of write, read or send}) instead of the enum's Java names.
 *
 * <p>Each option gets a subclass with a no-argument constructor naming its spellings, given to
 * picocli twice: {@code @Option(converter = X.class, completionCandidates = X.class)}. A spelling
 * is its constant's name in lower or upper case; constants left out (an internal one) are refused.
 */
public abstract class OptionChoices<E extends Enum<E>> implements CommandLine.ITypeConverter<E>, Iterable<String> {

    private final List<String> spellings;
    private final List<E> constants = new ArrayList<>();

    protected OptionChoices(Class<E> type, String... spellings) {
        this.spellings = List.of(spellings);
        for (String spelling : spellings) {
            constants.add(Enum.valueOf(type, spelling.toUpperCase(Locale.ROOT)));
        }
    }

    @Override
    public E convert(String value) {
        for (int i = 0; i < spellings.size(); i++) {
            if (spellings.get(i).equalsIgnoreCase(value)) {
                return constants.get(i);
            }
        }
        throw new CommandLine.TypeConversionException("'" + value + "' is not one of " + list());
    }

    /** {@code write, read or send}. */
    public String list() {
        int last = spellings.size() - 1;
        return last == 0 ? spellings.get(0)
                : String.join(", ", spellings.subList(0, last)) + " or " + spellings.get(last);
    }

    @Override
    public Iterator<String> iterator() {
        return spellings.iterator();
    }
}
