package org.jiwarp.rpcrdma;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Dispatches calls on their program and version (RFC 5531 section 9) to the handler of each: a
 * program it does not hold is answered PROG_UNAVAIL, a version outside a program's PROG_MISMATCH
 * with the lowest and highest versions held. An NFSv3 server registers NFS (100003, version 3) and
 * MOUNT (100005, version 3) here. Immutable once built.
 *
 * <pre>{@code
 * RpcHandler handler = RpcPrograms.builder().add(100003, 3, nfs).add(100005, 3, mount).build();
 * }</pre>
 */
public final class RpcPrograms implements RpcHandler {

    private final Map<Integer, TreeMap<Integer, RpcHandler>> programs;

    private RpcPrograms(Map<Integer, TreeMap<Integer, RpcHandler>> programs) {
        this.programs = programs;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public RpcReply handle(RpcCall call) {
        TreeMap<Integer, RpcHandler> versions = programs.get(call.program());
        if (versions == null) {
            return RpcReply.progUnavail();
        }
        RpcHandler handler = versions.get(call.version());
        if (handler == null) {
            return RpcReply.progMismatch(versions.firstKey(), versions.lastKey());
        }
        return handler.handle(call);
    }

    /** Collects the programs; {@link #build} copies them. */
    public static final class Builder {

        private final Map<Integer, TreeMap<Integer, RpcHandler>> programs = new HashMap<>();

        private Builder() {
        }

        /**
         * Serves {@code version} of {@code program} with {@code handler}.
         *
         * @throws IllegalArgumentException when that version of the program is already held
         */
        public Builder add(int program, int version, RpcHandler handler) {
            if (programs.computeIfAbsent(program, p -> new TreeMap<>()).putIfAbsent(version, handler) != null) {
                throw new IllegalArgumentException("program " + program + " version " + version + " is already served");
            }
            return this;
        }

        public RpcPrograms build() {
            Map<Integer, TreeMap<Integer, RpcHandler>> copy = new HashMap<>();
            programs.forEach((program, versions) -> copy.put(program, new TreeMap<>(versions)));
            return new RpcPrograms(copy);
        }
    }
}
