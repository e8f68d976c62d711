package org.jiwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The README stays a page a newcomer reads: under 400 lines, a reference page under {@code docs/}
 * for every subcommand the {@code jiwarp} command has, linked from it, and no relative link in the
 * README or the pages that leads nowhere.
 */
class DocumentationTest {

    private static final Path ROOT = Path.of("..");
    private static final Path README = ROOT.resolve("README.md");
    private static final int README_MOST_LINES = 400;
    /** A Markdown link's target: {@code [text](target)}, the part before any {@code #}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]*)(#[^)\\s]*)?\\)");

    @Test
    void theReadmeIsShort() throws IOException {
        int lines = Files.readAllLines(README).size();
        assertTrue(lines < README_MOST_LINES, "README.md has " + lines + " lines; keep it under "
                + README_MOST_LINES + " and move reference material to docs/");
    }

    @Test
    void everySubcommandHasAPageLinkedFromTheReadme() throws IOException {
        String readme = Files.readString(README);
        List<String> missing = new ArrayList<>();
        for (String name : Jiwarp.commandLine().getSubcommands().keySet()) {
            CommandLine sub = Jiwarp.commandLine().getSubcommands().get(name);
            if (name.equals("help") || sub.getCommandSpec().usageMessage().hidden()) {
                continue;
            }
            if (name.equals("generate-completion")) {
                // picocli's utility: the README's release section says how to use it.
                assertTrue(readme.contains("jiwarp generate-completion"), "README.md does not mention " + name);
                continue;
            }
            Path page = ROOT.resolve("docs").resolve(name + ".md");
            if (!Files.isRegularFile(page) || !readme.contains("](docs/" + name + ".md")) {
                missing.add(name);
            }
        }
        assertEquals(List.of(), missing, "subcommands without a docs/NAME.md linked from README.md");
    }

    @Test
    void everyRelativeLinkLeadsToAFile() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(README));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            Matcher link = LINK.matcher(Files.readString(page));
            while (link.find()) {
                String target = link.group(1);
                if (target.isEmpty() || target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                if (!Files.exists(page.getParent().resolve(target))) {
                    broken.add(ROOT.relativize(page) + " -> " + target);
                }
            }
        }
        assertEquals(List.of(), broken, "relative links that lead to no file");
    }
}
