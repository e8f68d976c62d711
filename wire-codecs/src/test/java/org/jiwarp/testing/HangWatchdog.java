package org.jiwarp.testing;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.DynamicTestInvocationContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

/**
 * The last line of the test deadlines: ends the test JVM when a test outlives JUnit's timeout by
 * {@link #GRACE} because it ignored the interrupt (a busy loop, an uninterruptible wait, a blocking
 * socket read), after printing which test it was and every thread's stack.
 *
 * <p>Every test and lifecycle method has a deadline, {@code junit.jupiter.execution.timeout.default}
 * (the parent pom sets it per module from {@code jiwarp.testTimeout}). JUnit enforces it by
 * interrupting the test's thread and failing the test once it returns; a test that does not return
 * would hold the build until CI's own limit. Surefire's {@code forkedProcessTimeoutInSeconds} is
 * meant for that, but did not end a spinning test JVM here (surefire 3.5.4; SUREFIRE-1722), so this
 * extension does it from inside: {@link Runtime#halt} after the deadline and the grace, which
 * surefire reports as a test JVM that ended without saying goodbye, a failed build.
 *
 * <p>Registered for every test class of every module by JUnit's extension auto-detection, as
 * {@link LeakCheckExtension}. It also bounds dynamic tests ({@code @TestFactory}), which JUnit's
 * timeout does not. A method's own {@code @Timeout} is not read: none is used here; the default
 * bounds everything.
 */
public final class HangWatchdog implements InvocationInterceptor {

    /** How long past its deadline a test may take to answer the interrupt. */
    static final Duration GRACE = Duration.ofMinutes(2);

    static final String DEFAULT_TIMEOUT = "junit.jupiter.execution.timeout.default";

    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|μs|ms|s|m|h|d)?",
            Pattern.CASE_INSENSITIVE);

    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "jiwarp-hang-watchdog");
        t.setDaemon(true);
        return t;
    });

    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        watch(invocation, context, invocationContext.getExecutable().getName());
    }

    @Override
    public void interceptBeforeEachMethod(Invocation<Void> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        watch(invocation, context, invocationContext.getExecutable().getName());
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
            ExtensionContext context) throws Throwable {
        watch(invocation, context, null);
    }

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        watch(invocation, context, null);
    }

    @Override
    public <T> T interceptTestFactoryMethod(Invocation<T> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        return watch(invocation, context, null);
    }

    @Override
    public void interceptDynamicTest(Invocation<Void> invocation, DynamicTestInvocationContext invocationContext,
            ExtensionContext context) throws Throwable {
        watch(invocation, context, null);
    }

    @Override
    public void interceptAfterEachMethod(Invocation<Void> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        watch(invocation, context, invocationContext.getExecutable().getName());
    }

    @Override
    public void interceptAfterAllMethod(Invocation<Void> invocation,
            ReflectiveInvocationContext<Method> invocationContext, ExtensionContext context) throws Throwable {
        watch(invocation, context, invocationContext.getExecutable().getName());
    }

    private static <T> T watch(Invocation<T> invocation, ExtensionContext context, String lifecycleMethod)
            throws Throwable {
        Optional<Duration> deadline = context.getConfigurationParameter(DEFAULT_TIMEOUT).map(HangWatchdog::parse);
        if (deadline.isEmpty()) {
            return invocation.proceed();
        }
        String what = context.getUniqueId() + (lifecycleMethod == null ? "" : " (" + lifecycleMethod + ")");
        Thread runner = Thread.currentThread();
        Duration limit = deadline.get().plus(GRACE);
        ScheduledFuture<?> alarm = WATCHDOG.schedule(() -> halt(what, deadline.get(), runner),
                limit.toNanos(), TimeUnit.NANOSECONDS);
        try {
            return invocation.proceed();
        } finally {
            alarm.cancel(false);
        }
    }

    /** JUnit's duration syntax for timeouts: a number and an optional unit (seconds by default). */
    static Duration parse(String value) {
        Matcher m = DURATION.matcher(value.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException(DEFAULT_TIMEOUT + " is not a duration: '" + value + "'");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
        return switch (unit) {
            case "ns" -> Duration.ofNanos(n);
            case "μs" -> Duration.ofNanos(n * 1000);
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    private static void halt(String what, Duration deadline, Thread runner) {
        PrintStream err = System.err;
        err.println();
        err.println("HangWatchdog: " + what + " is still running " + GRACE.toSeconds() + " s after its "
                + deadline.toSeconds() + " s deadline: it ignored JUnit's interrupt. Its thread, " + runner.getName()
                + ", and every other thread follow; then this test JVM halts, and the build fails.");
        for (Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
            Thread t = thread.getKey();
            err.println("\"" + t.getName() + "\"" + (t.isDaemon() ? " daemon" : "") + " " + t.getState());
            for (StackTraceElement frame : thread.getValue()) {
                err.println("\tat " + frame);
            }
            err.println();
        }
        err.flush();
        System.out.flush();
        try {
            // Surefire forwards the test JVM's output in the background: give it time to pass this on.
            Thread.sleep(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Runtime.getRuntime().halt(3);
    }
}
