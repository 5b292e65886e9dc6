package dev.fencing.verify.checker;

/**
 * Operation outcomes counted over one stretch of a run: the whole run, one nemesis window, or everything outside
 * the windows. An operation belongs to the stretch its completion (or, with none, its invocation) falls in.
 *
 * @param label   what the stretch is: {@code all}, {@code outside}, or {@code <nemesis> <target>}
 * @param fromMono start, System.nanoTime() (the window's start event, or the first event of the history); 0 for
 *                 {@code outside}
 * @param toMono   end (the window's stop event, or the last event of the history when it never stopped); for
 *                 {@code outside}, the nanoseconds of the run outside every window
 * @param ok       operations that completed ok
 * @param fail     operations that failed (did not take effect)
 * @param info     operations whose outcome is unknown (info, or never completed)
 */
public record WindowStats(String label, long fromMono, long toMono, long ok, long fail, long info) {

    /** ok + fail + info. */
    public long total() {
        return ok + fail + info;
    }

    /** The share of operations that completed ok, 0 when there were none. */
    public double okRate() {
        return total() == 0 ? 0 : (double) ok / total();
    }

    /** The share that failed, 0 when there were none. */
    public double failRate() {
        return total() == 0 ? 0 : (double) fail / total();
    }

    /** The share with an unknown outcome, 0 when there were none. */
    public double infoRate() {
        return total() == 0 ? 0 : (double) info / total();
    }

    /** How long the stretch lasted, in seconds (for a window that is its length; for "outside" the time outside). */
    public double seconds() {
        return Math.max(0, toMono - fromMono) / 1e9;
    }
}
