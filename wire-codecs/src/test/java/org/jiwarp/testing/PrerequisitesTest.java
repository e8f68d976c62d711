package org.jiwarp.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class PrerequisitesTest {

    @Test
    void aMissingToolFailsUnderCiAndSkipsElsewhere() {
        AssertionFailedError ci = assertThrows(AssertionFailedError.class,
                () -> Prerequisites.require("tshark is not installed", true));
        assertTrue(ci.getMessage().contains("tshark is not installed"), ci.getMessage());
        TestAbortedException local = assertThrows(TestAbortedException.class,
                () -> Prerequisites.require("tshark is not installed", false));
        assertTrue(local.getMessage().contains("tshark is not installed"), local.getMessage());
    }

    @Test
    void aMissingPartFailsUnderCiAndIsLeftOutElsewhere() {
        AssertionFailedError ci = assertThrows(AssertionFailedError.class,
                () -> Prerequisites.optional(false, "no siw captures", true));
        assertTrue(ci.getMessage().contains("no siw captures"), ci.getMessage());
        assertFalse(Prerequisites.optional(false, "no siw captures", false));
        assertTrue(Prerequisites.optional(true, "no siw captures", true));
    }

    @Test
    void nothingMissingGoesOn() {
        assertDoesNotThrow(() -> Prerequisites.require(null, true));
        assertDoesNotThrow(() -> Prerequisites.require(null, false));
    }
}
