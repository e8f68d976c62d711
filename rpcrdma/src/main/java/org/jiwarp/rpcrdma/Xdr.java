package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * XDR (RFC 4506) over a Netty {@link ByteBuf}: the handful of types ONC RPC, RPC-over-RDMA and
 * NFSv3 use. Every item is a multiple of four octets, big-endian; variable-length opaque data and
 * strings carry a length and are padded with zeros to a multiple of four (section 4.10, 4.11).
 * Decoding checks lengths against what is left and against the caller's bound, and throws
 * {@link XdrException} rather than reading past the end.
 */
public final class Xdr {

    private Xdr() {
    }

    /** Zero to three: the padding after {@code length} octets of opaque data. */
    public static int pad(int length) {
        return -length & 3;
    }

    public static void putInt(ByteBuf out, int value) {
        out.writeInt(value);
    }

    public static void putHyper(ByteBuf out, long value) {
        out.writeLong(value);
    }

    public static void putBoolean(ByteBuf out, boolean value) {
        out.writeInt(value ? 1 : 0);
    }

    /** Variable-length opaque: length, the octets, zero padding. */
    public static void putOpaque(ByteBuf out, byte[] data) {
        out.writeInt(data.length);
        putFixedOpaque(out, data);
    }

    /** Fixed-length opaque: the octets and zero padding, no length. */
    public static void putFixedOpaque(ByteBuf out, byte[] data) {
        out.writeBytes(data);
        out.writeZero(pad(data.length));
    }

    public static void putString(ByteBuf out, String value) {
        putOpaque(out, value.getBytes(StandardCharsets.UTF_8));
    }

    public static int getInt(ByteBuf in) {
        need(in, 4, "an int");
        return in.readInt();
    }

    /** An unsigned int as a long. */
    public static long getUnsignedInt(ByteBuf in) {
        return getInt(in) & 0xFFFF_FFFFL;
    }

    public static long getHyper(ByteBuf in) {
        need(in, 8, "a hyper");
        return in.readLong();
    }

    public static boolean getBoolean(ByteBuf in) {
        int value = getInt(in);
        if (value != 0 && value != 1) {
            throw new XdrException("a boolean is " + value + ", not 0 or 1");
        }
        return value == 1;
    }

    /** Variable-length opaque of at most {@code max} octets. */
    public static byte[] getOpaque(ByteBuf in, int max) {
        int length = getLength(in, max, "opaque data");
        return getFixedOpaque(in, length);
    }

    /** Fixed-length opaque of {@code length} octets and its padding. */
    public static byte[] getFixedOpaque(ByteBuf in, int length) {
        need(in, length + pad(length), length + " octets of opaque data");
        byte[] data = new byte[length];
        in.readBytes(data);
        in.skipBytes(pad(length));
        return data;
    }

    public static String getString(ByteBuf in, int max) {
        return new String(getOpaque(in, max), StandardCharsets.UTF_8);
    }

    /** A length field of at most {@code max} (read as unsigned). */
    public static int getLength(ByteBuf in, int max, String what) {
        long length = getUnsignedInt(in);
        if (length > max) {
            throw new XdrException(what + " is " + length + " octets long, more than " + max);
        }
        return (int) length;
    }

    private static void need(ByteBuf in, int octets, String what) {
        if (in.readableBytes() < octets) {
            throw new XdrException("the XDR stream ends " + (octets - in.readableBytes()) + " octets into " + what);
        }
    }
}
