package org.jiwarp.rnic;

/**
 * Access rights of a memory region, as {@code int} bit flags ({@code IBV_ACCESS_*} in spirit),
 * passed to {@link ProtectionDomain#register}:
 *
 * <ul>
 *   <li>{@link #LOCAL_WRITE}: this side may write the region: a receive buffer, or the sink of an
 *       RDMA Read this side issues.</li>
 *   <li>{@link #REMOTE_WRITE}: the peer may write it with RDMA Write.</li>
 *   <li>{@link #REMOTE_READ}: the peer may read it with RDMA Read.</li>
 *   <li>{@link #REMOTE_ATOMIC}: the peer may run atomic operations on it (RFC 7306: fetch-and-add,
 *       swap, compare-and-swap on 8-octet aligned values).</li>
 * </ul>
 *
 * <p>Local read needs no flag: a region is always readable by its owner.
 */
public final class Access {

    public static final int LOCAL_WRITE = org.jiwarp.ddp.Access.LOCAL_WRITE;
    public static final int REMOTE_WRITE = org.jiwarp.ddp.Access.REMOTE_WRITE;
    public static final int REMOTE_READ = org.jiwarp.ddp.Access.REMOTE_READ;
    public static final int REMOTE_ATOMIC = org.jiwarp.ddp.Access.REMOTE_ATOMIC;
    /** Every flag this class defines. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private Access() {
    }

    /** The flags by name, joined with {@code |} ({@code "LOCAL_WRITE|REMOTE_READ"}, {@code "none"}). */
    public static String describe(int access) {
        return org.jiwarp.ddp.Access.describe(access);
    }
}
