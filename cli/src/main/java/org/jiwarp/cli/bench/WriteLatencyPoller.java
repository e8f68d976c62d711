package org.jiwarp.cli.bench;

import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;
import org.jiwarp.rnic.MemoryRegion;
import org.jiwarp.rnic.QpState;
import org.jiwarp.rnic.QueuePair;
import org.jiwarp.rnic.SendWorkRequest;
import org.jiwarp.rnic.Sge;

/**
 * The memory polling of {@code ib_write_lat}: an RDMA Write raises no completion at its target, so
 * each side learns of the peer's Write by watching the last octet of its own buffer change to the
 * value the peer put there.
 */
final class WriteLatencyPoller {

    private WriteLatencyPoller() {
    }

    /** The last-octet value of ping {@code index}: never 0, the buffer's initial content. */
    static byte marker(long index) {
        return (byte) (index % 255 + 1);
    }

    /**
     * Spins until {@code region}'s octet at {@code offset} reads {@code value}; {@code false} if
     * {@code stop} turns true first. Spins briefly, then yields, so that on a machine with few cores
     * the event loops doing the placement still run.
     */
    static boolean await(MemoryRegion region, int offset, byte value, BooleanSupplier stop) {
        int spins = 0;
        while (true) {
            VarHandle.acquireFence();
            if (region.buffer().getByte(offset) == value) {
                return true;
            }
            if (++spins > 1000) {
                if ((spins & 1023) == 0 && stop.getAsBoolean()) {
                    return false;
                }
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** The server's side: answer every Write that arrives with a Write of the same size, on a thread of its own. */
    static void serve(QueuePair qp, MemoryRegion region, BenchSpec spec) {
        SendWorkRequest answer = SendWorkRequest.write(0, spec.remoteAddress(), spec.remoteStag(), Sge.of(region));
        Thread thread = new Thread(() -> {
            for (long index = 0; ; index++) {
                byte value = marker(index);
                if (!await(region, spec.size() - 1, value, () -> qp.state() != QpState.RTS)) {
                    return;
                }
                qp.postSend(answer.id(index));
            }
        }, "jiwarp-write-lat-server-" + qp.number());
        thread.setDaemon(true);
        thread.start();
    }
}
