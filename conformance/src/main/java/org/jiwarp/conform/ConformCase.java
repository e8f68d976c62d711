package org.jiwarp.conform;

/**
 * One case of the suite: what the raw peer does to the target, what the RFC requires of it, and
 * where the RFC says so.
 *
 * @param name a unique, stable name ({@code --case}, known-deviation files)
 * @param group the layer it abuses ({@code --group})
 * @param role the role the target must play, or {@code null} when the case runs in both
 * @param program the tool the target must run ({@code --app})
 * @param section the RFC and section, e.g. {@code "RFC 5041 7.1"}
 * @param setup how MPA setup goes before the action
 * @param action what the raw peer does
 * @param expect what the target must do, and its check
 */
public record ConformCase(String name, Group group, Role role, java.util.Set<Program> programs, String section, Setup setup,
        Action action, Expect expect) {

    /** How the raw peer sets up MPA before the action. */
    public enum Setup {
        /** rping's setup, with CRCs asked for (in the Request or the Reply). */
        CRC,
        /** rping's setup without asking for CRCs. */
        NO_CRC,
        /** The action sets up MPA itself (or abuses it). */
        MANUAL
    }

    /** What the raw peer does once set up. */
    @FunctionalInterface
    public interface Action {
        void run(Session s) throws Exception;
    }

    /** Whether this case can run against a target in {@code targetRole}. */
    public boolean runsIn(Role targetRole) {
        return role == null || role == targetRole;
    }

    /** Whether this case can run against a target running {@code program}. */
    public boolean runsWith(Program program) {
        return programs.contains(program);
    }

    /** What the RFC requires, in words. */
    public String requirement() {
        return expect.describe();
    }
}
