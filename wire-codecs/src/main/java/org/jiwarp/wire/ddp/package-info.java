/**
 * DDP wire formats (RFC 5041 section 4): the control byte, the tagged buffer model header
 * (section 4.2) and the untagged buffer model header (section 4.3), with RDMAP's queue numbers
 * (RFC 5040 section 5.1). DDP's Terminate error codes (RFC 5041 section 7.2) are in
 * {@link org.jiwarp.wire.rdmap.TerminateError} with the other layers'.
 */
package org.jiwarp.wire.ddp;
