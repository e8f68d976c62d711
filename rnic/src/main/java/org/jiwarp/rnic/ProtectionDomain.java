package org.jiwarp.rnic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;

/**
 * A protection domain (RFC 5040 section 2.1, {@code ibv_alloc_pd}): memory regions and queue pairs
 * of one domain only; a remote access through an STag of another domain is refused.
 */
public final class ProtectionDomain {

    private final Rnic rnic;
    private final int id;

    ProtectionDomain(Rnic rnic, int id) {
        this.rnic = rnic;
        this.id = id;
    }

    public int id() {
        return id;
    }

    public Rnic rnic() {
        return rnic;
    }

    /**
     * Registers a direct buffer's remaining bytes ({@code ibv_reg_mr}). The region's address (the
     * Tagged Offset of its first byte) is the buffer's native address, as for a real RNIC.
     *
     * @param access a combination of {@link org.jiwarp.ddp.Access} flags
     */
    public MemoryRegion register(ByteBuffer buffer, int access) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("register a direct ByteBuffer (or a ByteBuf)");
        }
        return rnic.register(this, Unpooled.wrappedBuffer(buffer.slice()), access);
    }

    /**
     * Registers a {@code ByteBuf}'s readable bytes. The caller keeps ownership: it must outlive the
     * registration.
     */
    public MemoryRegion register(ByteBuf buffer, int access) {
        return rnic.register(this, buffer.slice(), access);
    }

    @Override
    public String toString() {
        return "PD " + id;
    }
}
