package org.jiwarp.ddp;

/**
 * Receives shared by the untagged queues of several streams (the verbs' shared receive queue; siw's
 * {@code siw_rqe_get} with an SRQ): an {@link UntaggedQueue} built on them posts none of its own and
 * takes one, oldest first, when a message starts and it holds none.
 *
 * <p>Safe from any thread: the streams that share the receives are served by different threads.
 */
@FunctionalInterface
public interface SharedReceives {

    /** The oldest receive posted, now the caller's; {@code null} when none is posted. */
    ReceiveBuffer take();
}
