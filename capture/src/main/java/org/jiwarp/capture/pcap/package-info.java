/**
 * Offline capture files and the TCP byte streams inside them: the input of jiwarp's iWARP stream
 * decoder and the output of its synthetic-traffic captures.
 *
 * <ul>
 *   <li>{@link org.jiwarp.capture.pcap.CaptureReader} reads a capture of any size one record at a
 *       time, from a file or a stream; {@link org.jiwarp.capture.pcap.PcapFile} reads a small one
 *       whole into memory on top of it. {@link org.jiwarp.capture.pcap.PcapWriter} writes
 *       the classic libpcap file format (the tcpdump.org "pcap file format" description):
 *       both byte orders, microsecond and nanosecond magic, link types from the tcpdump.org
 *       {@code LINKTYPE_} list as {@link org.jiwarp.capture.pcap.LinkType}.
 *       {@link org.jiwarp.capture.pcap.PcapNgReader} and {@link org.jiwarp.capture.pcap.PcapNgWriter}
 *       read and write pcapng (IETF draft-ietf-opsawg-pcapng: section header, interface description
 *       with per-interface link type, {@code if_tsresol} and {@code if_tsoffset}, enhanced, simple
 *       and obsolete packet blocks, both byte orders, other blocks skipped); gzip-compressed files
 *       of either format are read through {@link java.util.zip.GZIPInputStream}.
 *       Malformed files give a {@link org.jiwarp.capture.pcap.PcapFormatException}.</li>
 *   <li>{@link org.jiwarp.capture.pcap.PacketParser} lifts a {@link org.jiwarp.capture.pcap.TcpSegment}
 *       out of Ethernet (with up to two 802.1Q/802.1ad tags), Linux cooked or raw IP frames, over
 *       IPv4 (RFC 791) or IPv6 with extension headers (RFC 8200 section 4).</li>
 *   <li>{@link org.jiwarp.capture.pcap.TcpConversations} groups segments into connections numbered as
 *       Wireshark's {@code tcp.stream}; each {@link org.jiwarp.capture.pcap.TcpDirection} puts its
 *       segments back into the byte stream the sender wrote, with RFC 9293 section 3.4 sequence
 *       arithmetic (wrap-around, retransmissions, overlaps, reordering), as
 *       {@link org.jiwarp.capture.pcap.StreamChunk}s tagged with frame numbers.</li>
 *   <li>{@link org.jiwarp.capture.pcap.SyntheticTcpCapture} writes made-up but checksum-correct TCP
 *       traffic of one connection, for captures of jiwarp's own exchanges and for tests.</li>
 * </ul>
 *
 * <p>Everything here works on plain {@code byte[]}: it is meant for offline decoding and tests,
 * where clarity matters more than allocation. Reading and writing stream, so a capture's size is
 * limited by the disk only; {@link org.jiwarp.capture.pcap.PcapFile} and
 * {@link org.jiwarp.capture.pcap.TcpConversations#of(PcapFile)} hold a whole capture.
 */
package org.jiwarp.capture.pcap;
