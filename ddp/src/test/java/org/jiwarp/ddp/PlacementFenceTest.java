package org.jiwarp.ddp;

import static org.jiwarp.wire.rdmap.TerminateAssertions.assertTerminate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jiwarp.wire.rdmap.TerminateError;
import org.jiwarp.wire.rdmap.TerminateException;
import org.jiwarp.wire.rdmap.TerminateLayer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The placement fence, deterministically: a placement copies a large segment (16 MiB, so the copy
 * lasts long enough to be caught in the middle) while another thread deregisters or invalidates the
 * region, locally or as a Send with Invalidate would. The caller waits until a copy is visibly
 * half done (the placer alternates two payloads, so the front and the end differ only then), pulls the region, and scribbles over it
 * back to front: once the call has returned, not one scribbled byte may change. Without the fence
 * the copy runs on past the call and overwrites the end of the scribble, every time.
 */
class PlacementFenceTest {

    private static final int PD = 7;
    private static final long BASE = 0x10_0000L;
    private static final int SIZE = 16 << 20;
    private static final int CHUNK = 64 << 10;
    private static final byte PAYLOAD_A = (byte) 0xA5;
    private static final byte PAYLOAD_B = (byte) 0xC3;
    private static final byte SCRIBBLE = (byte) 0x5A;
    private static final int ROUNDS = 3;

    enum Pull {
        DEREGISTER, INVALIDATE, REMOTE_INVALIDATE
    }

    @ParameterizedTest
    @EnumSource(Pull.class)
    void noByteIsWrittenAfterTheCallReturns(Pull pull) throws Exception {
        ByteBuf memory = Unpooled.directBuffer(SIZE, SIZE);
        ByteBuf payloadA = Unpooled.directBuffer(SIZE, SIZE);
        ByteBuf payloadB = Unpooled.directBuffer(SIZE, SIZE);
        ByteBuf scribble = Unpooled.directBuffer(SIZE, SIZE);
        StagTable table = new StagTable(16);
        CompletableFuture<TerminateException> placer = null;
        TaggedBuffer region = null;
        try {
            fill(payloadA, PAYLOAD_A);
            fill(payloadB, PAYLOAD_B);
            fill(scribble, SCRIBBLE);
            // Read through a plain NIO view: paranoid leak detection records every ByteBuf access.
            ByteBuffer view = memory.nioBuffer(0, SIZE);
            for (int round = 0; round < ROUNDS; round++) {
                memory.setBytes(0, scribble, 0, SIZE);
                TaggedBuffer current = table.register(PD, memory, BASE, SIZE, Access.REMOTE_WRITE);
                region = current;
                placer = CompletableFuture.supplyAsync(() -> {
                    try {
                        for (int n = 0; ; n++) {
                            TaggedBuffer sink = checkSink(table, current.stag(), BASE, SIZE, PD,
                                    Access.REMOTE_WRITE);
                            TaggedPlacement.place(sink, BASE, (n & 1) == 0 ? payloadA : payloadB, 0, SIZE);
                        }
                    } catch (TerminateException refused) {
                        return refused;
                    }
                });
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                // The placer alternates two payloads: front and end differ only while a copy runs.
                while (view.get(0) == view.get(SIZE - 1)) {
                    assertTrue(System.nanoTime() < deadline, "no copy was seen half done within 30 s");
                    Thread.onSpinWait();
                }
                switch (pull) {
                    case DEREGISTER -> assertTrue(table.deregister(region.stag()));
                    case INVALIDATE -> assertTrue(table.invalidate(region.stag()));
                    case REMOTE_INVALIDATE -> assertTrue(table.invalidate(region.stag()));
                }
                for (int at = SIZE - CHUNK; at >= 0; at -= CHUNK) {
                    memory.setBytes(at, scribble, at, CHUNK);
                }
                TerminateException refused = placer.get(30, TimeUnit.SECONDS);
                assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, refused.error(), "round " + round);
                assertFalse(region.valid());
                int changed = -1;
                for (int i = 0; i < SIZE && changed < 0; i++) {
                    if (view.get(i) != SCRIBBLE) {
                        changed = i;
                    }
                }
                assertEquals(-1, changed, pull + " returned while the copy was still running (round " + round
                        + "): the byte at " + changed + " was overwritten after the call");
                table.deregister(region.stag());
            }
        } finally {
            // Stop the placer before the memory goes, whatever failed.
            if (region != null) {
                table.deregister(region.stag());
            }
            if (placer != null) {
                placer.handle((refused, error) -> null).get(30, TimeUnit.SECONDS);
            }
            memory.release();
            payloadA.release();
            payloadB.release();
            scribble.release();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Pull.class, names = {"DEREGISTER", "INVALIDATE"})
    void aPlacementAfterTheCallFailsAsAnInvalidStag(Pull pull) {
        StagTable table = new StagTable(16);
        ByteBuf memory = Unpooled.buffer(64);
        TaggedBuffer region = table.register(PD, memory, BASE, 64, Access.REMOTE_WRITE);
        TaggedBuffer checked = checkSink(table, region.stag(), BASE, 8, PD, Access.REMOTE_WRITE);
        if (pull == Pull.DEREGISTER) {
            assertTrue(table.deregister(region.stag()));
            assertFalse(table.deregister(region.stag()), "a second deregistration finds nothing");
        } else {
            table.invalidate(region.stag());
        }
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        assertTerminate(TerminateLayer.DDP, 1, 0x00, TerminateError.DDP_TAGGED_INVALID_STAG,
                () -> TaggedPlacement.place(checked, BASE, payload));
        assertEquals(0, memory.getLong(0), "nothing copied");
        assertTrue(checked.toString().endsWith(", invalid]"), checked.toString());
    }

    private static void fill(ByteBuf buffer, byte value) {
        byte[] chunk = new byte[CHUNK];
        java.util.Arrays.fill(chunk, value);
        for (int at = 0; at < buffer.capacity(); at += CHUNK) {
            buffer.setBytes(at, chunk);
        }
    }

    /** DDP's two tagged checks (RDMAP's access check sits between them; the fence does not depend on it). */
    private static TaggedBuffer checkSink(StagTable table, int stag, long taggedOffset, int length, int pd,
            int access) {
        TaggedBuffer region = TaggedPlacement.lookup(table, stag, pd);
        assertTrue(region.grants(access));
        TaggedPlacement.checkRange(region, taggedOffset, length);
        return region;
    }
}
