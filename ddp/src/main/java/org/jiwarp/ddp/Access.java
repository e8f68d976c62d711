package org.jiwarp.ddp;

/**
 * Access rights of a registered region, as {@code int} bit flags (the verbs' {@code IBV_ACCESS_*}
 * idea, restricted to what DDP and RDMAP check).
 *
 * <ul>
 *   <li>{@link #LOCAL_WRITE}: the local side may write the region: a receive buffer, or the Data
 *       Sink of an RDMA Read this side issued (the Read Response lands there).</li>
 *   <li>{@link #REMOTE_WRITE}: the peer may write it with RDMA Write.</li>
 *   <li>{@link #REMOTE_READ}: the peer may read it with an RDMA Read Request.</li>
 *   <li>{@link #REMOTE_ATOMIC}: the peer may run RFC 7306 atomic operations on it.</li>
 * </ul>
 *
 * <p>Local read needs no flag: a region is always readable by its owner.
 */
public final class Access {

    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 2;
    public static final int REMOTE_READ = 4;
    public static final int REMOTE_ATOMIC = 8;
    /** Every flag this class defines. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private Access() {
    }

    /** {@code true} when {@code access} holds every flag of {@code required}. */
    public static boolean grants(int access, int required) {
        return (access & required) == required;
    }

    /**
     * The flags by name, joined with {@code |}: {@code "LOCAL_WRITE|REMOTE_READ"}, {@code "none"}
     * for 0; bits this class does not define follow in hex.
     */
    public static String describe(int access) {
        if (access == 0) {
            return "none";
        }
        StringBuilder out = new StringBuilder();
        append(out, access, LOCAL_WRITE, "LOCAL_WRITE");
        append(out, access, REMOTE_WRITE, "REMOTE_WRITE");
        append(out, access, REMOTE_READ, "REMOTE_READ");
        append(out, access, REMOTE_ATOMIC, "REMOTE_ATOMIC");
        int unknown = access & ~ALL;
        if (unknown != 0) {
            out.append(out.length() == 0 ? "" : "|").append("0x").append(Integer.toHexString(unknown));
        }
        return out.toString();
    }

    private static void append(StringBuilder out, int access, int flag, String name) {
        if ((access & flag) != 0) {
            out.append(out.length() == 0 ? "" : "|").append(name);
        }
    }
}
