package org.jiwarp.testing;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Turns Netty's leak reports into test failures.
 *
 * <p>Registered for every test class of every module by JUnit's extension auto-detection
 * ({@code META-INF/services} in this test-jar; surefire enables auto-detection). It installs a
 * {@link ResourceLeakDetectorFactory} whose detectors record each leak report instead of only
 * logging it. After each test class it forces a collection, allocates a few buffers so the
 * detectors drain their reference queues, and fails the class if anything leaked.
 *
 * <p>Surefire runs with {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked.
 */
public final class LeakCheckExtension implements BeforeAllCallback, AfterAllCallback {

    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        synchronized (LEAKS) {
            LEAKS.clear();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        List<String> found = collectLeakReports();
        if (!found.isEmpty()) {
            throw new AssertionError("Netty reported " + found.size() + " leak(s) in "
                    + context.getDisplayName() + ":\n" + String.join("\n---\n", found));
        }
    }

    /**
     * Forces collection, makes the detectors drain their queues, and returns (and forgets) every
     * leak report since the last call.
     */
    public static List<String> collectLeakReports() throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(20);
            // Allocation is what makes a detector poll its queue of collected, unreleased buffers.
            for (int i = 0; i < 4; i++) {
                PooledByteBufAllocator.DEFAULT.heapBuffer(8).release();
                PooledByteBufAllocator.DEFAULT.directBuffer(8).release();
                UnpooledByteBufAllocator.DEFAULT.heapBuffer(8).release();
                UnpooledByteBufAllocator.DEFAULT.directBuffer(8).release();
            }
        }
        synchronized (LEAKS) {
            List<String> found = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return found;
        }
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(
                Class<T> resource, int samplingInterval, long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            super.reportTracedLeak(resourceType, records);
            record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected." + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            super.reportUntracedLeak(resourceType);
            record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected.");
        }

        private static void record(String report) {
            synchronized (LEAKS) {
                LEAKS.add(report);
            }
        }
    }
}
