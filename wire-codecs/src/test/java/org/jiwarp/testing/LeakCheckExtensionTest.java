package org.jiwarp.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

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

    /**
     * A leak reported after one class was checked and before the next starts (here: dropped, then
     * found by the next class's beforeAll) fails that next class; it used to be cleared away.
     */
    @Test
    void aLeakReportedBetweenTwoClassesFailsTheNextClass() throws Exception {
        assertTrue(LeakCheckExtension.collectLeakReports().isEmpty(), "nothing pending before the case");
        LeakCheckExtension extension = new LeakCheckExtension();
        ExtensionContext next = classContext("NextTest");
        leakOne();
        extension.beforeAll(next);
        AssertionError failure = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                () -> extension.afterAll(next));
        assertTrue(failure.getMessage().contains("before this one started"), failure.getMessage());
        assertTrue(failure.getMessage().contains("LEAK"), failure.getMessage());
        // And a class with nothing before it and nothing during it passes.
        extension.beforeAll(next);
        extension.afterAll(next);
    }

    /** An ExtensionContext with a display name and a store, all the extension uses. */
    private static ExtensionContext classContext(String name) {
        Map<Object, Object> values = new HashMap<>();
        ExtensionContext.Store store = (ExtensionContext.Store) Proxy.newProxyInstance(
                LeakCheckExtensionTest.class.getClassLoader(), new Class<?>[] {ExtensionContext.Store.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "put" -> values.put(args[0], args[1]);
                    case "remove" -> values.remove(args[0]);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        return (ExtensionContext) Proxy.newProxyInstance(LeakCheckExtensionTest.class.getClassLoader(),
                new Class<?>[] {ExtensionContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getDisplayName" -> name;
                    case "getStore" -> store;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeInt(7);
    }
}
