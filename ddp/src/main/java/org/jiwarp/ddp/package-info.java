/**
 * DDP (RFC 5041): what this module owns.
 *
 * <ul>
 *   <li>Segmentation of tagged and untagged messages by MULPDU into retained slices, never copies
 *       (RFC 5041 sections 5.1, 5.2).</li>
 *   <li>Tagged placement at STag and Tagged Offset after the checks of section 8.2, in order: valid
 *       STag, associated with this stream's protection domain, access rights, base and bounds, TO
 *       wrap (sections 3.2, 4.2, 8.2).</li>
 *   <li>Untagged placement by QN, MSN and MO into posted receive buffers with the checks of
 *       sections 4.3, 5.3 and 8.3: invalid QN, no buffer, MSN range, MO, message too long.</li>
 *   <li>Every error of section 7.2 mapped to exactly one Terminate (layer, error type, code).</li>
 * </ul>
 *
 * <p>Header accessors live in {@code org.jiwarp.wire.ddp} (wire-codecs). Filled by the RNIC issue.
 */
package org.jiwarp.ddp;
