package org.jiwarp.conform;

import java.io.EOFException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import org.jiwarp.conform.peer.MpaBytes;
import org.jiwarp.conform.peer.TerminateCheck.Carried;
import org.jiwarp.conform.peer.TerminateCheck;
import org.jiwarp.wire.rdmap.TerminateError;

/**
 * What the RFC requires of the target in a case, and the check that judges what it did.
 *
 * <ul>
 *   <li>{@link #terminate}: one Terminate with one of the named errors (RFC layout), carrying exactly
 *       the headers RFC 5040 section 4.8 names for the offending ULPDU, nothing else sent after the
 *       case began, then the close (RFC 5040 section 5.4);</li>
 *   <li>{@link #carriesOn}: no error; the next step of rping's exchange gets its answer;</li>
 *   <li>{@link #refused}: MPA setup ends in a close without a Reply, or a Reply with R then a close;</li>
 *   <li>{@link #closesWithoutFpdus}: the target, as initiator, closes after a bad Reply, sending no FPDU;</li>
 *   <li>{@link #closesAndServesOn}: after this end's Terminate, the close, and the next connection served;</li>
 *   <li>{@link #holds}: a rule the case checks itself (the exhaustion group's resource rules).</li>
 * </ul>
 */
interface Expect {

    /** Waits as long as it needs (within the session's timeout) and judges what the target did. */
    Judgement judge(Session s) throws Exception;

    /** What the RFC requires, in words, for reports. */
    String describe();

    static Expect terminate(TerminateError error, Carried carried) {
        return terminate(List.of(error), List.of(carried));
    }

    /**
     * A Terminate with any of {@code errors} carrying any of {@code carried}: for the cases where
     * the RFCs allow more than one reading (each is listed in the case's requirement).
     */
    static Expect terminate(List<TerminateError> errors, List<Carried> carried) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                long deadline = System.nanoTime() + s.timeoutMillis * 1_000_000L;
                Observation seen = Observation.of(s);
                while (seen.terminate() == null && !seen.closed() && System.nanoTime() < deadline) {
                    Thread.sleep(2);
                    seen = Observation.of(s);
                }
                if (seen.terminate() != null) {
                    s.peer.awaitClosed(Math.max(1, (deadline - System.nanoTime()) / 1_000_000L));
                    seen = Observation.of(s);
                }
                byte[] terminate = seen.terminate();
                if (terminate == null) {
                    return Judgement.fail(seen.closed() ? seen.describe() + " without a Terminate"
                            : "no Terminate within " + s.timeoutMillis + " ms: it " + seen.describe());
                }
                List<String> problems = new ArrayList<>();
                byte[] offending = s.offending == null ? new byte[0] : s.offending;
                for (TerminateError error : errors) {
                    for (Carried c : carried) {
                        List<String> these = TerminateCheck.problems(terminate, error, c, offending);
                        if (these.isEmpty()) {
                            problems.clear();
                            return judgeAround(seen);
                        }
                        if (problems.isEmpty() || these.size() < problems.size()) {
                            problems = these;
                        }
                    }
                }
                // Read in siw's encoding, is it the Terminate the RFC requires (error, HdrCt, headers)?
                TerminateError siw = TerminateCheck.siwReading(terminate);
                byte[] reencoded = TerminateCheck.asRfcLayout(terminate);
                if (reencoded != null && errors.contains(siw)) {
                    if (TerminateCheck.siwLayoutError(terminate) == null) {
                        // Valid both ways: describe() named only the RFC reading.
                        problems = new ArrayList<>(problems);
                        problems.add(String.format("read as Linux siw 6.1 encodes it (little-endian bitfields), "
                                + "0x%08x is the RFC's %s", java.nio.ByteBuffer.wrap(terminate, 18, 4).getInt(),
                                siw.describe()));
                    }
                    List<String> inSiwEncoding = null;
                    for (Carried c : carried) {
                        List<String> these = TerminateCheck.problems(reencoded, siw, c, offending);
                        if (inSiwEncoding == null || these.size() < inSiwEncoding.size()) {
                            inSiwEncoding = these;
                        }
                    }
                    if (inSiwEncoding.isEmpty()) {
                        Judgement around = judgeAround(seen);
                        String note = TerminateCheck.siwLayoutError(terminate) == null
                                ? "; " + problems.get(problems.size() - 1) : "";
                        return new Judgement(false, around.observed() + note, around.pass(), false);
                    }
                    problems = new ArrayList<>(problems);
                    problems.add("read in that encoding: " + String.join("; ", inSiwEncoding));
                }
                return new Judgement(false, "it " + seen.describe() + "; " + String.join("; ", problems), false,
                        false);
            }

            private Judgement judgeAround(Observation seen) {
                if (!seen.beforeTerminate().isEmpty()) {
                    return Judgement.fail("it " + seen.describe() + "; before the Terminate it sent what the error "
                            + "should have stopped");
                }
                if (!seen.closed()) {
                    return Judgement.fail("it " + seen.describe() + "; the connection stays open after the Terminate");
                }
                if (!seen.problems().isEmpty()) {
                    return Judgement.fail("it " + seen.describe());
                }
                return Judgement.pass("it " + seen.describe());
            }

            @Override
            public String describe() {
                List<String> names = new ArrayList<>();
                for (TerminateError e : errors) {
                    names.add(e.describe());
                }
                List<String> what = new ArrayList<>();
                for (Carried c : carried) {
                    what.add(carriedName(c));
                }
                return "Terminate " + String.join(" or ", names) + ", carrying " + String.join(" or ", what)
                        + ", then close";
            }
        };
    }

    private static String carriedName(Carried c) {
        switch (c) {
            case NOTHING:
                return "no header";
            case DDP_HEADER:
                return "the DDP header (M, D)";
            default:
                return "the DDP and Read Request headers (M, D, R)";
        }
    }

    /** No error: the next step of rping's exchange, its first FPDU cut by {@code split}, is answered. */
    static Expect carriesOn(String what, Session.Splitter split) {
        return carriesOn(what, split, null);
    }

    static Expect carriesOn(String what) {
        return carriesOn(what, Session.Splitter.WHOLE);
    }

    /** MPA setup: the target closes without a Reply, or rejects (R) and closes. */
    static Expect refused() {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                MpaBytes.Parsed reply;
                try {
                    reply = s.peer.readMpaFrame(s.timeoutMillis);
                } catch (EOFException e) {
                    return Judgement.pass("it closed the connection without a Reply");
                } catch (SocketTimeoutException e) {
                    return Judgement.fail("it neither replied nor closed within " + s.timeoutMillis + " ms");
                } catch (java.io.IOException e) {
                    return Judgement.pass("it reset the connection without a Reply");
                } catch (AssertionError e) {
                    return Judgement.fail("it answered with something other than an MPA frame");
                }
                if (!reply.reject()) {
                    return Judgement.fail(String.format("it accepted: a Reply with flags 0x%02x, revision %d",
                            reply.flags(), reply.revision()));
                }
                return closesAfter(s, "it rejected with R set");
            }

            @Override
            public String describe() {
                return "no full operation: close without a Reply, or a Reply with R set and a close";
            }
        };
    }

    /**
     * The target, as initiator, closes after a bad Reply, sending nothing but (at most) a Terminate
     * naming the LLP error "Invalid MPA Request/Reply Frame" (RFC 5044 section 8, RFC 6581 section 3).
     */
    static Expect closesWithoutFpdus() {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                byte[] after;
                try {
                    after = s.peer.readUntilClosed(s.timeoutMillis);
                } catch (AssertionError e) {
                    return Judgement.fail("the connection is still open " + s.timeoutMillis + " ms after the Reply");
                }
                if (after.length == 0) {
                    return Judgement.pass("it closed the connection and sent nothing");
                }
                byte[] ulpdu = after.length >= 2 ? java.util.Arrays.copyOfRange(after, 2, Math.min(after.length,
                        2 + ((after[0] & 0xFF) << 8 | after[1] & 0xFF))) : new byte[0];
                if (!org.jiwarp.conform.peer.Ulpdus.isTerminate(ulpdu)) {
                    return Judgement.fail("after the Reply it sent " + after.length + " octets: "
                            + Observation.hex(after));
                }
                String seen = "it sent " + TerminateCheck.describe(ulpdu) + " and closed the connection";
                List<String> problems = TerminateCheck.problems(ulpdu, TerminateError.LLP_INVALID_REQUEST_REPLY,
                        Carried.NOTHING, new byte[0]);
                if (problems.isEmpty()) {
                    return Judgement.pass(seen);
                }
                boolean encodingOnly = TerminateCheck.siwLayoutError(ulpdu) == TerminateError.LLP_INVALID_REQUEST_REPLY;
                return new Judgement(false, seen + "; " + String.join("; ", problems), encodingOnly, false);
            }

            @Override
            public String describe() {
                return "the initiator closes the connection, sending no FPDU but at most a Terminate LLP / MPA Error "
                        + "/ Invalid MPA Request/Reply Frame";
            }
        };
    }

    private static Judgement closesAfter(Session s, String before) throws Exception {
        byte[] after;
        try {
            after = s.peer.readUntilClosed(s.timeoutMillis);
        } catch (AssertionError e) {
            return Judgement.fail(before + ", and the connection is still open after " + s.timeoutMillis + " ms");
        }
        if (after.length > 0) {
            return Judgement.fail(before + ", then sent " + after.length + " octets: " + Observation.hex(after));
        }
        return Judgement.pass(before + " and closed the connection");
    }

    /** A step of rping's exchange that a {@link #carriesOn} case takes. */
    @FunctionalInterface
    interface Step {
        void run(Session s) throws Exception;
    }

    /** No error: {@code step} (a step of rping's exchange, abused or not) gets its answer. */
    static Expect carriesOnAfter(String what, Step step) {
        return carriesOn(what, (Session.Splitter) null, step);
    }

    private static Expect carriesOn(String what, Session.Splitter split, Step step) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                try {
                    if (step != null) {
                        step.run(s);
                    } else {
                        s.probe(split);
                    }
                } catch (Session.CaseFailure e) {
                    return Judgement.fail(e.getMessage());
                } catch (PerftestExchange.ProbeTerminated e) {
                    Observation all = Observation.of(s);
                    return all.problems().isEmpty()
                            ? Judgement.pass("no error; the Write sent next, one octet past the region's end, drew "
                                    + TerminateCheck.describe(all.terminate()))
                            : Judgement.fail("it " + all.describe());
                }
                boolean closed = s.peer.awaitClosed(0); // first: see Observation.of
                List<byte[]> received = s.peer.received();
                Observation all = new Observation(received, closed, s.peer.problems());
                if (all.terminate() != null || all.closed() || !all.problems().isEmpty()) {
                    return Judgement.fail("it " + all.describe());
                }
                return Judgement.pass("it answered: " + Observation.summary(received.get(received.size() - 1)));
            }

            @Override
            public String describe() {
                return what;
            }
        };
    }

    /** MPA setup: the target's Reply (it did not reject) must satisfy {@code check}. */
    static Expect replyIs(String what, java.util.function.Predicate<MpaBytes.Parsed> check) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws InterruptedException {
                MpaBytes.Parsed reply = s.targetFrame;
                if (reply == null) {
                    return Judgement.fail("the target sent no MPA Reply within " + s.timeoutMillis + " ms"
                            + (s.peer.awaitClosed(0) ? ", and closed the connection" : "; the connection is open"));
                }
                String seen = String.format("it replied: flags 0x%02x, revision %d, private data %s", reply.flags(),
                        reply.revision(), Observation.hex(reply.privateData()));
                return check.test(reply) ? Judgement.pass(seen) : Judgement.fail(seen);
            }

            @Override
            public String describe() {
                return what;
            }
        };
    }

    /**
     * The target answers this end's Read Request with Read Responses to its sink from its first
     * octet on, {@code size} octets in all ({@code -1}: the session's whole region), the last with L.
     */
    static Expect answersReadInFull(String what, long size) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                long expected = size < 0 ? s.length : size;
                byte[] first;
                try {
                    first = s.awaitNew(u -> org.jiwarp.conform.peer.Ulpdus.isTagged(u,
                            org.jiwarp.wire.rdmap.RdmapOpcode.RDMA_READ_RESPONSE), "Read Response");
                    s.awaitNew(u -> org.jiwarp.conform.peer.Ulpdus.isTagged(u,
                            org.jiwarp.wire.rdmap.RdmapOpcode.RDMA_READ_RESPONSE)
                            && org.jiwarp.wire.ddp.DdpHeaders.last(io.netty.buffer.Unpooled.wrappedBuffer(u), 0),
                            "the Read Response's last segment (L set)");
                } catch (Session.CaseFailure e) {
                    return Judgement.fail(e.getMessage());
                }
                io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(first);
                long octets = s.peer.readResponseOctets() - s.readResponseOctetsAtMark;
                Observation seen = Observation.of(s);
                boolean right = org.jiwarp.wire.ddp.DdpHeaders.stag(b, 0) == Session.PEER_SINK_STAG
                        && org.jiwarp.wire.ddp.DdpHeaders.taggedOffset(b, 0) == Session.PEER_SINK_TO
                        && octets == expected && seen.terminate() == null && seen.problems().isEmpty();
                String told = "it sent " + octets + " octets of Read Response, the first segment "
                        + Observation.summary(first) + (seen.terminate() != null ? "; " + seen.describe() : "");
                return right ? Judgement.pass(told) : Judgement.fail(told + "; the Read asked for " + expected);
            }

            @Override
            public String describe() {
                return what;
            }
        };
    }

    /** The target answers this end's Read Request with a Read Response of {@code size} octets to its sink. */
    static Expect answersRead(String what, int size) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                byte[] response;
                try {
                    response = s.awaitNew(u -> org.jiwarp.conform.peer.Ulpdus.isTagged(u,
                            org.jiwarp.wire.rdmap.RdmapOpcode.RDMA_READ_RESPONSE), "Read Response");
                } catch (Session.CaseFailure e) {
                    return Judgement.fail(e.getMessage());
                }
                io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(response);
                boolean right = org.jiwarp.wire.ddp.DdpHeaders.stag(b, 0) == Session.PEER_SINK_STAG
                        && org.jiwarp.wire.ddp.DdpHeaders.taggedOffset(b, 0) == Session.PEER_SINK_TO
                        && org.jiwarp.wire.ddp.DdpHeaders.last(b, 0)
                        && response.length == org.jiwarp.wire.ddp.DdpHeaders.TAGGED_HEADER_LENGTH + size;
                String seen = "it sent " + Observation.summary(response);
                return right ? Judgement.pass(seen) : Judgement.fail(seen);
            }

            @Override
            public String describe() {
                return what;
            }
        };
    }

    /** What a {@link #holds} case checks once its stimulus is over. */
    @FunctionalInterface
    interface Check {
        Judgement judge(Session s) throws Exception;
    }

    /**
     * A rule the case checks itself ({@code check}): most often one the RFCs leave to the
     * implementation, the resource rule every trusted stack keeps, which {@code what} states.
     */
    static Expect holds(String what, Check check) {
        return new Expect() {
            @Override
            public Judgement judge(Session s) throws Exception {
                return check.judge(s);
            }

            @Override
            public String describe() {
                return what;
            }
        };
    }

    /**
     * After this end's Terminate, however malformed: the target closes the connection, sending
     * nothing on it but at most a Terminate of its own, and serves rping's exchange on the next
     * connection (RFC 5040 section 5.4: the stream is over; a target that stops answering fails).
     */
    static Expect closesAndServesOn() {
        return holds("the target closes the connection, sending nothing but at most a Terminate, and a fresh "
                + "connection then carries rping's exchange", s -> {
                    boolean closed = s.peer.awaitClosed(s.timeoutMillis);
                    Observation seen = Observation.of(s);
                    if (!closed) {
                        return Judgement.fail("it " + seen.describe() + " " + s.timeoutMillis
                                + " ms after this end's Terminate");
                    }
                    if (seen.ulpdus().size() > (seen.terminate() == null ? 0 : 1) || !seen.problems().isEmpty()) {
                        return Judgement.fail("it " + seen.describe() + "; after this end's Terminate it should "
                                + "have sent nothing but at most a Terminate");
                    }
                    String after = s.exchangeOnAnotherConnection();
                    return after == null
                            ? Judgement.pass("it " + seen.describe() + "; a fresh connection then carried rping's "
                                    + "exchange")
                            : Judgement.fail("it " + seen.describe() + "; then, on a fresh connection: " + after);
                });
    }
}
