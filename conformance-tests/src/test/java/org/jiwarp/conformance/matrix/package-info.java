/**
 * The RFC requirement matrix: {@code rfc-requirements.tsv} lists every MUST, MUST NOT, SHOULD and
 * SHOULD NOT of RFC 5044, 5041, 5040 and 6581 with whether it applies to jiwarp and the tests that
 * check it. {@link org.jiwarp.conformance.matrix.RequirementMatrixTest} keeps the file honest (every
 * applicable MUST has a test, every named test exists) and writes the coverage to
 * {@code target/rfc-coverage.md}; {@link org.jiwarp.conformance.matrix.RfcRequirementsTest} checks the
 * requirements no other test reached.
 */
package org.jiwarp.conformance.matrix;
