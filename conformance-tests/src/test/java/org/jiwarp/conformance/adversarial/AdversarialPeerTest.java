package org.jiwarp.conformance.adversarial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.jiwarp.conform.ConformCatalogue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs the {@link AdversarialCatalogue} against real jiwarp RNICs over loopback: a raw peer that
 * speaks MPA by hand sends each case's octets, and each case checks jiwarp's exact answer, that a
 * healthy connection on the same RNIC carried on throughout, and that no registered or guard octet
 * outside the case's target changed.
 */
class AdversarialPeerTest {

    private static final CaseRunner RUNNER = new CaseRunner();

    static Stream<AdversarialCase> cases() {
        return AdversarialCatalogue.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void catalogue(AdversarialCase c) throws Exception {
        RUNNER.run(c);
    }

    @Test
    void catalogueIsLargeAndItsNamesAreUnique() {
        List<AdversarialCase> all = AdversarialCatalogue.all();
        assertTrue(all.size() >= 60, "at least 60 cases: " + all.size());
        assertEquals(all.size(), AdversarialCatalogue.names().size());
        for (AdversarialCase c : all) {
            assertTrue(c.name().matches("[a-z0-9-]+"), c.name());
            assertTrue(c.section().startsWith("RFC "), c.name() + ": " + c.section());
        }
    }

    /**
     * A stimulus lives in one place: a case the conformance library has (run against jiwarp by
     * {@code JiwarpRpingConformTest}) is not built again here.
     */
    @Test
    void noCaseIsAlsoTheConformanceLibrarys() {
        Set<String> both = new TreeSet<>(AdversarialCatalogue.names());
        both.retainAll(ConformCatalogue.names());
        assertEquals(Set.of(), both, "cases in both catalogues");
    }

    @AfterAll
    static void closeTargets() {
        RUNNER.close();
    }
}
