/**
 * Memory, as the engine checks it for local use (siw's {@code siw_mem.c}): a scatter/gather entry's
 * region must be valid, of the queue pair's protection domain, grant the access, and hold the range
 * ({@link org.jiwarp.rnic.mem.LocalAccess}); the STag table and the checks of remote access are
 * {@code org.jiwarp.ddp}'s and {@code org.jiwarp.rdmap}'s.
 *
 * <p>Part of the RNIC's engine, below the verbs of {@code org.jiwarp.rnic}: public for the verbs'
 * sake, not an API.
 */
package org.jiwarp.rnic.mem;
