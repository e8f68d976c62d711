package org.jiwarp.rnic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jiwarp.mpa.MpaSettings;
import org.jiwarp.testing.Deadlines;
import org.jiwarp.wire.rdmap.TerminateError;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A user's listener that throws an {@link Error} (an assertion of the application's, a stack
 * overflow) is reported to its thread's uncaught exception handler as a runtime exception is, and
 * the RNIC carries on as if it had returned: the error never reaches the connection in the middle
 * of the segment it was placing. Over real loopback TCP.
 */
class ListenerErrorTest {

    private static final MpaSettings MPA = RnicOperationsTest.mpa(true, false);
    private static final Duration WAIT = Duration.ofSeconds(10);

    static Stream<Arguments> errors() {
        return Stream.of(
                Arguments.of("AssertionError", (Supplier<Error>) () -> new AssertionError("the application's "
                        + "listener asserts on purpose")),
                Arguments.of("StackOverflowError", (Supplier<Error>) ListenerErrorTest::overflow));
    }

    /** A real stack overflow, caught where it happened and handed back to be thrown by the listener. */
    private static Error overflow() {
        try {
            return overflow();
        } catch (StackOverflowError e) {
            return e;
        }
    }

    /** Records what a listener's thread reports and throws {@code error}'s errors from {@link #fail()}. */
    private static final class Failing {
        final List<Throwable> reported = new CopyOnWriteArrayList<>();
        final Supplier<Error> error;

        Failing(Supplier<Error> error) {
            this.error = error;
        }

        /** Throws on the listener's thread, having set that thread's handler to record it. */
        void fail() {
            Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
            throw error.get();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("errors")
    void aCompletionListenerThatThrowsAnErrorLeavesTheConnectionUp(String name, Supplier<Error> error)
            throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            Failing failing = new Failing(error);
            CountDownLatch received = new CountDownLatch(3);
            AtomicInteger calls = new AtomicInteger();
            pair.serverCq.onCompletion(wc -> {
                received.countDown();
                if (calls.getAndIncrement() == 0) {
                    failing.fail();
                }
            });
            sendThree(pair);
            Deadlines.await(received, WAIT, "three receives completed");
            assertEquals(QpState.RTS, pair.server.state(), "the server's connection error: "
                    + pair.server.connectionError());
            assertEquals(QpState.RTS, pair.client.state());
            assertEquals(1, failing.reported.size(), "reported: " + failing.reported);
            assertEquals(name, failing.reported.get(0).getClass().getSimpleName());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("errors")
    void aNotificationListenerThatThrowsAnErrorLeavesTheConnectionUp(String name, Supplier<Error> error)
            throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            Failing failing = new Failing(error);
            CountDownLatch notified = new CountDownLatch(1);
            pair.serverCq.onNotification(cq -> {
                notified.countDown();
                failing.fail();
            });
            pair.serverCq.requestNotification(false);
            sendThree(pair);
            Deadlines.await(notified, WAIT, "the notification");
            for (int i = 0; i < 3; i++) {
                WorkCompletion wc = RnicOperationsTest.take(pair.serverCq);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            assertEquals(QpState.RTS, pair.server.state(), "the server's connection error: "
                    + pair.server.connectionError());
            assertEquals(1, failing.reported.size(), "reported: " + failing.reported);
        }
    }

    /**
     * A Write to an unknown STag: the server's async event listener throws on the QP_FATAL event,
     * and still the Terminate goes to the client and the next listener hears of the event.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("errors")
    void anAsyncEventListenerThatThrowsAnErrorStopsNeitherTheTerminateNorTheOtherListeners(String name,
            Supplier<Error> error) throws Exception {
        try (RnicPair pair = new RnicPair(MPA, 1 << 16, (config, server) -> config)) {
            Failing failing = new Failing(error);
            CountDownLatch fatal = new CountDownLatch(1);
            pair.serverRnic.onAsyncEvent(event -> {
                if (event.type() == AsyncEvent.Type.QP_FATAL) {
                    failing.fail();
                }
            });
            pair.serverRnic.onAsyncEvent(event -> {
                if (event.type() == AsyncEvent.Type.QP_FATAL) {
                    fatal.countDown();
                }
            });
            pair.client.postSend(SendWorkRequest.write(1, pair.serverRegion.address(),
                    pair.serverRegion.rkey() ^ 0x100, new Sge(pair.clientRegion, 0, 64)));
            pair.client.closeFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertNotNull(pair.client.terminateReceived(), "the client got no Terminate; its connection error: "
                    + pair.client.connectionError());
            assertEquals(TerminateError.DDP_TAGGED_INVALID_STAG, pair.client.terminateReceived().error());
            Deadlines.await(fatal, WAIT, "the second listener's QP_FATAL");
            assertEquals(1, failing.reported.size(), "reported: " + failing.reported);
        }
    }

    /** Three Sends from the client into three receives at the server, each completed at the client. */
    private static void sendThree(RnicPair pair) throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            pair.server.postReceive(new ReceiveWorkRequest(i, new Sge(pair.serverRegion, i * 64L, 64)));
            pair.client.postSend(SendWorkRequest.send(10 + i, new Sge(pair.clientRegion, 0, 64)));
            WorkCompletion sent = RnicOperationsTest.take(pair.clientCq);
            assertEquals(WcStatus.SUCCESS, sent.status(), "Send " + i + ": " + sent);
        }
    }
}
