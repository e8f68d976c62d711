package org.jiwarp.rpcrdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.function.Consumer;

/**
 * ONC RPC over TCP with record marking (RFC 5531 section 11): each message goes as one record
 * fragment whose 4-octet header has the last-fragment bit and the length. Blocking, one call at a
 * time; for MOUNT, which NFSv3 over RDMA still reaches over TCP (RFC 8267 section 5.1).
 */
public final class TcpRpcClient implements AutoCloseable {

    private static final int LAST_FRAGMENT = 0x8000_0000;
    private static final int MAX_RECORD = 1 << 20;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int xid = (int) System.nanoTime();

    private TcpRpcClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    public static TcpRpcClient connect(InetSocketAddress server) {
        Socket socket = new Socket();
        try {
            socket.connect(server, 10_000);
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            return new TcpRpcClient(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already failing
            }
            throw new RpcException("cannot connect to " + server.getHostString() + " port " + server.getPort()
                    + " over TCP: " + Failures.describe(e), e);
        }
    }

    /**
     * Calls and returns the reply's results (after an accepted, successful reply header).
     *
     * @throws RpcException when the server denies the call or the connection fails
     */
    public ByteBuf call(int program, int version, int procedure, AuthSys credential, Consumer<ByteBuf> arguments) {
        int id = ++xid;
        ByteBuf message = Unpooled.buffer(256);
        message.writeInt(0); // the record mark, filled in below
        Rpc.putCall(message, id, program, version, procedure, credential);
        arguments.accept(message);
        message.setInt(0, LAST_FRAGMENT | (message.readableBytes() - 4));
        try {
            out.write(message.array(), message.arrayOffset(), message.readableBytes());
            out.flush();
            while (true) {
                ByteBuf reply = readRecord();
                if (Rpc.peekXid(reply) != id) {
                    continue; // a late reply to an earlier call
                }
                Rpc.getAcceptedReply(reply);
                return reply;
            }
        } catch (IOException e) {
            throw new RpcException("the TCP connection failed: " + Failures.describe(e), e);
        } finally {
            message.release();
        }
    }

    private ByteBuf readRecord() throws IOException {
        ByteBuf record = Unpooled.buffer();
        while (true) {
            int mark = in.readInt();
            int length = mark & ~LAST_FRAGMENT;
            if (record.readableBytes() + length > MAX_RECORD) {
                throw new IOException("a record of more than " + MAX_RECORD + " octets");
            }
            byte[] fragment = new byte[length];
            in.readFully(fragment);
            record.writeBytes(fragment);
            if ((mark & LAST_FRAGMENT) != 0) {
                return record;
            }
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to do
        }
    }
}
