package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;

/**
 * The AUTH_SYS credential (RFC 5531 appendix A): a stamp, the caller's machine name, uid, gid and
 * up to 16 supplementary gids. NFS servers take these as the caller's identity.
 */
public record AuthSys(int stamp, String machineName, int uid, int gid, List<Integer> gids) {

    /** The flavor number of AUTH_SYS. */
    public static final int FLAVOR = 1;
    /** The flavor number of AUTH_NONE. */
    public static final int NONE = 0;
    /** An opaque_auth body is at most 400 octets (RFC 5531 section 8.2). */
    public static final int MAX_BODY = 400;

    public AuthSys {
        gids = List.copyOf(gids);
        if (gids.size() > 16) {
            throw new IllegalArgumentException("AUTH_SYS carries at most 16 gids, not " + gids.size());
        }
        if (machineName.length() > 255) {
            throw new IllegalArgumentException("AUTH_SYS's machine name is at most 255 octets");
        }
    }

    /** uid 0, gid 0, as the kernel client sends for root. */
    public static AuthSys root(String machineName) {
        return new AuthSys(0, machineName, 0, 0, List.of(0));
    }

    /** The credential's body, as it goes inside the opaque_auth. */
    public byte[] body() {
        ByteBuf out = Unpooled.buffer(64);
        Xdr.putInt(out, stamp);
        Xdr.putString(out, machineName);
        Xdr.putInt(out, uid);
        Xdr.putInt(out, gid);
        Xdr.putInt(out, gids.size());
        gids.forEach(g -> Xdr.putInt(out, g));
        byte[] body = new byte[out.readableBytes()];
        out.readBytes(body);
        return body;
    }

    public static AuthSys decode(ByteBuf in) {
        int stamp = Xdr.getInt(in);
        String name = Xdr.getString(in, 255);
        int uid = Xdr.getInt(in);
        int gid = Xdr.getInt(in);
        int count = Xdr.getLength(in, 16, "the AUTH_SYS gid list");
        Integer[] gids = new Integer[count];
        for (int i = 0; i < count; i++) {
            gids[i] = Xdr.getInt(in);
        }
        return new AuthSys(stamp, name, uid, gid, List.of(gids));
    }
}
