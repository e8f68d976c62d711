package org.jiwarp.conform;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jiwarp.conform.peer.TerminateCheck;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * Runs cases against one target, each on a connection of its own, and always finishes: a target
 * that is down (resetting, restarting) is waited for up to {@code waitMillis}, restarted with the
 * restart command when it stays away, and a case that hangs is cut off and reported.
 */
public final class ConformRunner implements AutoCloseable {

    /** A case gets this many timeouts in all before it is cut off as hung. */
    private static final int HUNG_AFTER_TIMEOUTS = 4;
    /** What a verdict says when jiwarp conform, not the target, failed; the Java details go to the log under --debug. */
    private static final String INTERNAL_FAULT = "an internal fault of jiwarp conform, not the target's doing "
            + "(--debug prints it)";

    private final Role role;
    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final long timeoutMillis;
    private final long waitMillis;
    private final long firstFpduPauseMillis;
    private final List<String> restartCommand;
    private final Program program;
    private final int messageSize;
    private final Consumer<String> log;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "conform-case");
        t.setDaemon(true);
        return t;
    });
    private volatile Session current;
    /** The error of the Terminate the target sent in the case running now, once it is judged. */
    private volatile TerminateError lastTerminate;
    private boolean debug;
    private int unreachableLimit;
    private int unreachableInARow;
    private String stopReason;

    /**
     * @param target the target's address (it listens), or {@code null}
     * @param listener where the target connects (when {@code target} is {@code null})
     * @param restartCommand a command that restarts the target, or {@code null}
     * @param program the tool the target runs
     * @param messageSize perftest's {@code -s} on the target (it places the end of the region)
     */
    public ConformRunner(InetSocketAddress target, ServerSocket listener, long timeoutMillis, long waitMillis,
            long firstFpduPauseMillis, List<String> restartCommand, Program program, int messageSize,
            Consumer<String> log) {
        this.role = target != null ? Role.TARGET_LISTENS : Role.TARGET_CONNECTS;
        this.target = target;
        this.listener = listener;
        this.timeoutMillis = timeoutMillis;
        this.waitMillis = waitMillis;
        this.firstFpduPauseMillis = firstFpduPauseMillis;
        this.restartCommand = restartCommand;
        this.program = program;
        this.messageSize = messageSize;
        this.log = log;
    }

    public Role role() {
        return role;
    }

    /** Logs the Java details of jiwarp conform's own faults (the verdict says only that there was one). */
    public ConformRunner debug(boolean on) {
        this.debug = on;
        return this;
    }

    /**
     * Stops the run once the target has refused (or, when it connects, failed to make) this many
     * connections in a row, each after {@code waitMillis} and the restart command; 0 never stops.
     */
    public ConformRunner stopWhenUnreachable(int casesInARow) {
        this.unreachableLimit = casesInARow;
        return this;
    }

    /** Why the last {@link #run} stopped before its last case, or {@code null} when it ran them all. */
    public String stopReason() {
        return stopReason;
    }

    /** Runs {@code cases} in order, reporting each result to {@code done} as it comes. */
    public List<CaseResult> run(List<ConformCase> cases, KnownDeviations known, Consumer<CaseResult> done) {
        List<CaseResult> results = new ArrayList<>();
        stopReason = null;
        unreachableInARow = 0;
        for (ConformCase c : cases) {
            long start = System.nanoTime();
            lastTerminate = null;
            Judgement judgement = runOne(c);
            CaseResult result = CaseResult.of(c, judgement, known,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), lastTerminate);
            results.add(result);
            done.accept(result);
            if (unreachableLimit > 0 && unreachableInARow >= unreachableLimit) {
                stopReason = (role == Role.TARGET_LISTENS ? "the target refused " + unreachableInARow
                        + " connections in a row (is it running, on " + target.getHostString() + " port "
                        + target.getPort() + "?)" : "the target did not connect " + unreachableInARow
                        + " times in a row (is it running, and pointed at this port?)");
                break;
            }
        }
        return results;
    }

    private Judgement runOne(ConformCase c) {
        Future<Judgement> future = executor.submit(() -> attempt(c));
        long limit = HUNG_AFTER_TIMEOUTS * timeoutMillis + waitMillis + ExhaustionCases.ownBoundMillis(c);
        try {
            return future.get(limit, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            Session s = current;
            if (s != null) {
                s.close();
            }
            return new Judgement(false, "the case hung: no outcome within " + limit + " ms", false, true);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                return Judgement.fail("the case could not run: " + describe(cause));
            }
            logFault(c, cause);
            return Judgement.fail("the case could not run: " + INTERNAL_FAULT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Judgement.fail("interrupted");
        }
    }

    private Judgement attempt(ConformCase c) throws Exception {
        Socket socket = role == Role.TARGET_LISTENS ? connect() : accept();
        unreachableInARow = socket == null ? unreachableInARow + 1 : 0;
        if (socket == null) {
            return Judgement.fail(role == Role.TARGET_LISTENS
                    ? "the target did not accept a connection within " + waitMillis + " ms"
                    : "the target did not connect within " + waitMillis + " ms");
        }
        Session opened;
        if (program.perftest()) {
            try {
                opened = PerftestExchange.open(role, program, messageSize, c.setup() == ConformCase.Setup.CRC, socket,
                        () -> role == Role.TARGET_LISTENS ? connect() : accept(), timeoutMillis, firstFpduPauseMillis);
            } catch (IOException e) {
                socket.close();
                return Judgement.fail("perftest's exchange failed: " + (e instanceof SocketTimeoutException
                        ? "the target did not answer within " + timeoutMillis + " ms" : describe(e)));
            } catch (Session.SetupRefused | Session.CaseFailure e) {
                return Judgement.fail("perftest's exchange failed: " + e.getMessage());
            }
        } else {
            opened = new Session(role, socket, timeoutMillis, firstFpduPauseMillis);
        }
        try (Session s = opened) {
            current = s;
            s.opener(() -> role == Role.TARGET_LISTENS ? connect() : accept());
            try {
                setUp(c, s);
            } catch (IOException e) {
                return Judgement.fail("MPA setup failed: " + (e instanceof SocketTimeoutException
                        ? "the target did not answer within " + timeoutMillis + " ms" : describe(e)));
            } catch (Session.SetupRefused e) {
                return Judgement.fail(e.getMessage());
            }
            IOException stopped = null;
            try {
                c.action().run(s);
            } catch (Session.SetupRefused | Session.CaseFailure e) {
                return Judgement.fail(e.getMessage());
            } catch (IOException e) {
                // The target may have ended the stream already; what it sent says whether rightly.
                log.accept(c.name() + ": " + describe(e));
                stopped = e;
            } catch (RuntimeException e) {
                return cannotGoOn(c, s, null, e);
            }
            try {
                return c.expect().judge(s);
            } catch (Session.SetupRefused | Session.CaseFailure e) {
                return Judgement.fail(e.getMessage());
            } catch (RuntimeException e) {
                return cannotGoOn(c, s, stopped, e);
            } finally {
                byte[] terminate = Observation.of(s).terminate();
                lastTerminate = terminate == null ? null : TerminateCheck.error(terminate);
            }
        } finally {
            current = null;
        }
    }

    /**
     * The verdict of a case that could not be carried through, in words: what the target did
     * instead (most often, MPA setup did not complete), never the Java exception behind it.
     */
    private Judgement cannotGoOn(ConformCase c, Session s, IOException stopped, RuntimeException fault)
            throws InterruptedException {
        boolean closed = s.peer.awaitClosed(0);
        if (!s.peer.inFullOperation()) {
            String frame = role == Role.TARGET_LISTENS ? "MPA Reply" : "MPA Request";
            String what;
            if (s.targetFrame != null) {
                what = String.format("the target's %s (flags 0x%02x, revision %d) did not lead to full operation",
                        frame, s.targetFrame.flags(), s.targetFrame.revision());
            } else if (stopped instanceof SocketTimeoutException) {
                what = "the target sent no " + frame + " within " + timeoutMillis + " ms";
            } else if (stopped != null) {
                what = "the target sent no " + frame + " (" + describe(stopped) + ")";
            } else {
                what = "the target sent no " + frame;
            }
            return Judgement.fail("MPA setup did not complete: " + what
                    + (closed ? ", and closed the connection" : "; the connection is open"));
        }
        logFault(c, fault);
        return Judgement.fail("the case could not go on after the target " + Observation.of(s).describe() + ": "
                + INTERNAL_FAULT);
    }

    private void logFault(ConformCase c, Throwable fault) {
        if (debug) {
            java.io.StringWriter trace = new java.io.StringWriter();
            fault.printStackTrace(new java.io.PrintWriter(trace));
            log.accept(c.name() + ": " + trace);
        }
    }

    private void setUp(ConformCase c, Session s) throws Exception {
        if (c.setup() == ConformCase.Setup.MANUAL || s.program.perftest()) {
            return;
        }
        s.setUp(c.setup() == ConformCase.Setup.CRC);
    }

    /** Connects to the target, waiting out a target that is down and restarting it once when asked. */
    private Socket connect() throws Exception {
        boolean restarted = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        while (true) {
            Socket socket = new Socket();
            try {
                socket.connect(target, (int) Math.max(1000, timeoutMillis));
                return socket;
            } catch (ConnectException | SocketTimeoutException e) {
                socket.close();
                if (System.nanoTime() > deadline) {
                    if (restartCommand == null || restarted) {
                        return null;
                    }
                    restart();
                    restarted = true;
                    deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
                }
                Thread.sleep(200);
            }
        }
    }

    /** Accepts the target's next connection; restarts the target once when it does not come. */
    private Socket accept() throws Exception {
        for (int attempt = 0; attempt < 2; attempt++) {
            listener.setSoTimeout((int) Math.max(1, restartCommand == null || attempt > 0 ? waitMillis : waitMillis / 2));
            try {
                return listener.accept();
            } catch (SocketTimeoutException e) {
                if (restartCommand == null || attempt > 0) {
                    return null;
                }
                restart();
            }
        }
        return null;
    }

    /** Runs the restart command and waits for it (at most {@code waitMillis}). */
    private void restart() throws Exception {
        log.accept("the target is not answering; running the restart command: " + String.join(" ", restartCommand));
        Process p = new ProcessBuilder(restartCommand).inheritIO().start();
        if (!p.waitFor(waitMillis, TimeUnit.MILLISECONDS)) {
            p.destroy();
            log.accept("the restart command did not finish within " + waitMillis + " ms");
        }
    }

    private static String describe(Throwable t) {
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
