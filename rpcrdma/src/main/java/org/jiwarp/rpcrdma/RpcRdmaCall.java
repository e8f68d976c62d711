package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import java.util.function.Consumer;

/**
 * One RPC call as the RPC-over-RDMA transport sends it (RFC 8166 section 3.4): the program,
 * version and procedure, the arguments as they go inline, and the chunks.
 *
 * @param arguments      writes the procedure's arguments (XDR) after the call header; with a
 *                       {@code readChunk}, everything up to where the chunk's data belongs
 * @param readChunk      data the server pulls by RDMA Read (a DDP-eligible opaque such as
 *                       NFSv3 WRITE's data), positioned at the end of {@code arguments}; may be null
 * @param writeChunk     octets of a Write chunk the server pushes a DDP-eligible result into
 *                       (NFSv3 READ's data); 0 for none
 * @param replyChunk     octets of a Reply chunk for a reply that may exceed the inline threshold
 *                       (READDIR, READDIRPLUS); 0 for none
 */
public record RpcRdmaCall(int program, int version, int procedure, Consumer<ByteBuf> arguments, ByteBuf readChunk,
        int writeChunk, int replyChunk) {

    /** A call with its arguments inline and no chunks. */
    public static RpcRdmaCall inline(int program, int version, int procedure, Consumer<ByteBuf> arguments) {
        return new RpcRdmaCall(program, version, procedure, arguments, null, 0, 0);
    }

    public RpcRdmaCall withReadChunk(ByteBuf data) {
        return new RpcRdmaCall(program, version, procedure, arguments, data, writeChunk, replyChunk);
    }

    public RpcRdmaCall withWriteChunk(int octets) {
        return new RpcRdmaCall(program, version, procedure, arguments, readChunk, octets, replyChunk);
    }

    public RpcRdmaCall withReplyChunk(int octets) {
        return new RpcRdmaCall(program, version, procedure, arguments, readChunk, writeChunk, octets);
    }
}
