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
 * <p>A leak can also be reported between two classes (a buffer a class's event loops held until
 * they shut down, collected later): before each class the extension collects what was reported
 * since the last check and fails that class after it ran, saying that these leaks were reported
 * before it started (their records name where the buffers were last used). Nothing reported is
 * ever dropped.
 *
 * <p>Surefire runs with {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked.
 */
public final class LeakCheckExtension implements BeforeAllCallback, AfterAllCallback {

    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LeakCheckExtension.class);
    private static final String EARLIER = "leaks reported before the class started";

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        context.getStore(NAMESPACE).put(EARLIER, collectLeakReports());
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        @SuppressWarnings("unchecked")
        List<String> earlier = context.getStore(NAMESPACE).remove(EARLIER, List.class);
        String failure = failure(context.getDisplayName(), earlier == null ? List.of() : earlier, collectLeakReports());
        if (failure != null) {
            throw new AssertionError(failure);
        }
    }

    /** What a class's check says about the leaks reported before it started and while it ran; {@code null}: none. */
    static String failure(String testClass, List<String> before, List<String> during) {
        if (before.isEmpty() && during.isEmpty()) {
            return null;
        }
        StringBuilder s = new StringBuilder();
        if (!during.isEmpty()) {
            s.append("Netty reported ").append(during.size()).append(" leak(s) in ").append(testClass).append(":\n")
                    .append(String.join("\n---\n", during));
        }
        if (!before.isEmpty()) {
            s.append(s.length() == 0 ? "" : "\n---\n").append("Netty reported ").append(before.size())
                    .append(" leak(s) after the class before ").append(testClass)
                    .append(" was checked and before this one started (an earlier class leaked them):\n")
                    .append(String.join("\n---\n", before));
        }
        return s.toString();
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
