/**
 * Test support shared by every module through the wire-codecs test-jar: the seeded property
 * harness ({@link org.jiwarp.testing.Property}) and the Netty leak check
 * ({@link org.jiwarp.testing.LeakCheckExtension}) that fails any test class whose buffers leak.
 */
package org.jiwarp.testing;
