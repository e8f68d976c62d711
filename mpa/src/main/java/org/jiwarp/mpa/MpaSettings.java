package org.jiwarp.mpa;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jiwarp.wire.mpa.Fpdu;
import org.jiwarp.wire.mpa.MpaEnhanced;
import org.jiwarp.wire.mpa.MpaFrames;

/**
 * How one endpoint sets up MPA connections: revision, enhanced setup, CRC and marker policies,
 * IRD/ORD, peer-to-peer mode and its ready-to-receive offers, limits and timeouts. Immutable;
 * build with {@link #builder()}.
 *
 * <p>Defaults follow what interoperates with Linux siw: revision 2 with the RFC 6581 enhanced
 * setup, IRD = ORD = 16, CRC and markers used when the peer asks ({@link CrcPolicy#ACCEPT},
 * {@link MarkerPolicy#ACCEPT}), no peer-to-peer mode, private data up to 512 octets, 10 s for the
 * Reply and 5 s for the Request, MULPDU for an Ethernet MSS of 1460.
 */
public final class MpaSettings {

    /** An Ethernet MSS: 1500 - 20 (IPv4) - 20 (TCP). */
    public static final int DEFAULT_EMSS = 1460;
    /** The IRD/ORD limit Linux siw applies; also jiwarp's default ceiling for what it advertises. */
    public static final int DEFAULT_IRD_ORD = 16;

    private final int revision;
    private final boolean enhanced;
    private final CrcPolicy crcPolicy;
    private final MarkerPolicy markerPolicy;
    private final int ird;
    private final int ord;
    private final boolean peerToPeer;
    private final Set<RtrType> rtrOffers;
    private final int privateDataLimit;
    private final Duration replyTimeout;
    private final Duration requestTimeout;
    private final int emss;
    private final boolean largeFpdus;
    private final int maxInboundUlpdu;
    private final boolean strictRfc;

    private MpaSettings(Builder b) {
        this.strictRfc = b.strictRfc;
        this.revision = b.revision;
        this.enhanced = b.enhanced;
        this.crcPolicy = b.crcPolicy;
        this.markerPolicy = b.markerPolicy;
        this.ird = b.ird;
        this.ord = b.ord;
        this.peerToPeer = b.peerToPeer;
        this.rtrOffers = EnumSet.copyOf(b.rtrOffers);
        this.privateDataLimit = b.privateDataLimit;
        this.replyTimeout = b.replyTimeout;
        this.requestTimeout = b.requestTimeout;
        this.emss = b.emss;
        this.largeFpdus = b.largeFpdus;
        this.maxInboundUlpdu = b.maxInboundUlpdu;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The defaults. */
    public static MpaSettings defaults() {
        return builder().build();
    }

    /** A builder preset with these settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.revision = revision;
        b.enhanced = enhanced;
        b.crcPolicy = crcPolicy;
        b.markerPolicy = markerPolicy;
        b.ird = ird;
        b.ord = ord;
        b.peerToPeer = peerToPeer;
        b.rtrOffers = EnumSet.copyOf(rtrOffers);
        b.privateDataLimit = privateDataLimit;
        b.replyTimeout = replyTimeout;
        b.requestTimeout = requestTimeout;
        b.emss = emss;
        b.largeFpdus = largeFpdus;
        b.maxInboundUlpdu = maxInboundUlpdu;
        b.strictRfc = strictRfc;
        return b;
    }

    /** The highest MPA revision spoken: 1 (RFC 5044) or 2 (RFC 6581). */
    public int revision() {
        return revision;
    }

    /** Whether the RFC 6581 enhanced setup (IRD/ORD words, peer-to-peer) is offered; needs revision 2. */
    public boolean enhanced() {
        return enhanced;
    }

    /**
     * The CRC policy in force. {@link CrcPolicy#ACCEPT} (the default, as Linux siw: CRCs only when
     * the peer asks) reads as {@link CrcPolicy#REQUIRE} in {@linkplain #strictRfc() strict mode}:
     * RFC 5044 section 4.4 has CRCs used by default, suppressed only on an explicit request
     * ({@link CrcPolicy#REFUSE}).
     */
    public CrcPolicy crcPolicy() {
        return strictRfc && crcPolicy == CrcPolicy.ACCEPT ? CrcPolicy.REQUIRE : crcPolicy;
    }

    /**
     * Strict mode: the RFCs where jiwarp otherwise follows Linux siw. CRCs by default (RFC 5044
     * section 4.4), MULPDU within [128, 64768] even with {@link #largeFpdus()} (section 3), and a
     * responder not configured for the enhanced setup closes on an enhanced Request (RFC 6581
     * section 10). {@code RnicOptions.strictRfc} sets it along with the RDMAP side.
     */
    public boolean strictRfc() {
        return strictRfc;
    }

    public MarkerPolicy markerPolicy() {
        return markerPolicy;
    }

    /** Inbound RDMA Read Requests this endpoint can have outstanding. */
    public int ird() {
        return ird;
    }

    /** Outbound RDMA Read Requests this endpoint wants to have outstanding. */
    public int ord() {
        return ord;
    }

    /** As initiator: ask for peer-to-peer mode with a ready-to-receive frame. */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** As initiator: the RTR frames offered; as responder: the ones accepted. */
    public Set<RtrType> rtrOffers() {
        return EnumSet.copyOf(rtrOffers);
    }

    /** The most private data accepted from the peer (and sent): 0..512. */
    public int privateDataLimit() {
        return privateDataLimit;
    }

    public Duration replyTimeout() {
        return replyTimeout;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** The effective MSS MULPDU is computed from. */
    public int emss() {
        return emss;
    }

    /**
     * Frame up to 64 KiB FPDUs regardless of the MSS: a Linux siw compatibility option (siw takes
     * 64 KiB FPDUs). It departs from RFC 5044 section 3, whose MULPDU stays within [128, 64768]
     * (65530 with this option); without it, or in {@linkplain #strictRfc() strict mode}, MULPDU stays in
     * range whatever the EMSS.
     */
    public boolean largeFpdus() {
        return largeFpdus;
    }

    /** The longest inbound ULPDU accepted. */
    public int maxInboundUlpdu() {
        return maxInboundUlpdu;
    }

    /** MULPDU for outbound FPDUs (RFC 5044 section 5.2), with or without markers toward the peer. */
    public int mulpdu(boolean markersToPeer) {
        if (largeFpdus && !strictRfc) {
            return Fpdu.mulpdu(65536, markersToPeer);
        }
        // RFC 5044 section 3: MULPDU stays between 128 and 64768 octets.
        return Math.min(RFC_MAX_MULPDU, Fpdu.mulpdu(emss, markersToPeer));
    }

    /** The largest MULPDU RFC 5044 section 3 allows. */
    public static final int RFC_MAX_MULPDU = 64768;

    @Override
    public String toString() {
        return "MpaSettings{rev=" + revision + (enhanced ? " enhanced" : "") + ", crc=" + crcPolicy + ", markers="
                + markerPolicy + (strictRfc ? ", strict" : "") + ", ird=" + ird + ", ord=" + ord
                + (peerToPeer ? ", p2p " + rtrOffers : "")
                + ", privateDataLimit=" + privateDataLimit + "}";
    }

    /** Builds {@link MpaSettings}. */
    public static final class Builder {
        private int revision = MpaFrames.REVISION_2;
        private boolean enhanced = true;
        private CrcPolicy crcPolicy = CrcPolicy.ACCEPT;
        private MarkerPolicy markerPolicy = MarkerPolicy.ACCEPT;
        private int ird = DEFAULT_IRD_ORD;
        private int ord = DEFAULT_IRD_ORD;
        private boolean peerToPeer;
        private Set<RtrType> rtrOffers = EnumSet.of(RtrType.WRITE, RtrType.READ);
        private int privateDataLimit = MpaFrames.MAX_PRIVATE_DATA_LENGTH;
        private Duration replyTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(5);
        private int emss = DEFAULT_EMSS;
        private boolean largeFpdus;
        private int maxInboundUlpdu = Fpdu.MAX_ULPDU_LENGTH;
        private boolean strictRfc;

        private Builder() {
        }

        /** See {@link MpaSettings#strictRfc()}. */
        public Builder strictRfc(boolean strict) {
            this.strictRfc = strict;
            return this;
        }

        /** MPA revision 1 (RFC 5044, no enhanced setup) or 2 (RFC 6581). */
        public Builder revision(int revision) {
            if (revision != MpaFrames.REVISION_1 && revision != MpaFrames.REVISION_2) {
                throw new IllegalArgumentException("MPA revision must be 1 or 2, not " + revision);
            }
            this.revision = revision;
            if (revision == MpaFrames.REVISION_1) {
                enhanced = false;
            }
            return this;
        }

        public Builder enhanced(boolean enhanced) {
            this.enhanced = enhanced;
            return this;
        }

        public Builder crc(CrcPolicy policy) {
            this.crcPolicy = Objects.requireNonNull(policy);
            return this;
        }

        public Builder markers(MarkerPolicy policy) {
            this.markerPolicy = Objects.requireNonNull(policy);
            return this;
        }

        public Builder ird(int ird) {
            this.ird = checkIrdOrd("IRD", ird);
            return this;
        }

        public Builder ord(int ord) {
            this.ord = checkIrdOrd("ORD", ord);
            return this;
        }

        public Builder peerToPeer(boolean peerToPeer) {
            this.peerToPeer = peerToPeer;
            return this;
        }

        public Builder rtrOffers(Set<RtrType> offers) {
            this.rtrOffers = offers.isEmpty() ? EnumSet.noneOf(RtrType.class) : EnumSet.copyOf(offers);
            return this;
        }

        public Builder privateDataLimit(int limit) {
            if (limit < 0 || limit > MpaFrames.MAX_PRIVATE_DATA_LENGTH) {
                throw new IllegalArgumentException("private data limit must be 0..512, not " + limit);
            }
            this.privateDataLimit = limit;
            return this;
        }

        public Builder replyTimeout(Duration timeout) {
            this.replyTimeout = positive(timeout);
            return this;
        }

        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout);
            return this;
        }

        public Builder emss(int emss) {
            if (emss < 128 || emss > 65535) {
                throw new IllegalArgumentException("EMSS must be 128..65535, not " + emss);
            }
            this.emss = emss;
            return this;
        }

        public Builder largeFpdus(boolean largeFpdus) {
            this.largeFpdus = largeFpdus;
            return this;
        }

        public Builder maxInboundUlpdu(int length) {
            if (length < 1 || length > Fpdu.MAX_ULPDU_LENGTH) {
                throw new IllegalArgumentException("max inbound ULPDU must be 1..65535, not " + length);
            }
            this.maxInboundUlpdu = length;
            return this;
        }

        public MpaSettings build() {
            if (enhanced && revision != MpaFrames.REVISION_2) {
                throw new IllegalStateException("the enhanced setup needs MPA revision 2 (RFC 6581 section 3)");
            }
            if (peerToPeer && !enhanced) {
                throw new IllegalStateException("peer-to-peer mode needs the enhanced setup (RFC 6581 section 3)");
            }
            if (peerToPeer && rtrOffers.isEmpty()) {
                throw new IllegalStateException("peer-to-peer mode needs at least one RTR frame to offer");
            }
            int overhead = enhanced ? MpaEnhanced.LENGTH : 0;
            if (privateDataLimit < overhead) {
                throw new IllegalStateException("the private data limit leaves no room for the IRD/ORD words");
            }
            return new MpaSettings(this);
        }

        private static int checkIrdOrd(String name, int value) {
            if (value < 0 || value > MpaEnhanced.VALUE_MASK) {
                throw new IllegalArgumentException(name + " must be 0..16383, not " + value);
            }
            return value;
        }

        private static Duration positive(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive: " + timeout);
            }
            return timeout;
        }
    }
}
