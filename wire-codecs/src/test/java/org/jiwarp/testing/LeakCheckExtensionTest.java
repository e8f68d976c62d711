package org.jiwarp.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The leak check itself must be able to fail: a dropped buffer has to show up as a report. */
class LeakCheckExtensionTest {

    @Test
    void droppedBufferIsReported() throws Exception {
        assertEquals("PARANOID", io.netty.util.ResourceLeakDetector.getLevel().name(),
                "surefire must run with -Dio.netty.leakDetection.level=paranoid");
        leakOne();
        List<String> reports = LeakCheckExtension.collectLeakReports();
        assertFalse(reports.isEmpty(), "a buffer dropped without release() was not reported");
        assertTrue(reports.get(0).contains("LEAK"), reports.get(0));
    }

    @Test
    void releasedBufferIsNotReported() throws Exception {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        buf.writeLong(42);
        buf.release();
        assertTrue(LeakCheckExtension.collectLeakReports().isEmpty());
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeInt(7);
    }
}
