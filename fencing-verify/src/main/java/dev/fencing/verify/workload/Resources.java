package dev.fencing.verify.workload;

/**
 * The resources of a run: a workload over {@code count} resources names them {@code <base>-0} ..
 * {@code <base>-<count-1>}, or just {@code <base>} when there is one (so a one-resource history reads as before).
 * Resource {@code i} is row {@code i} of the workload's table and the lock key {@code i}.
 */
public final class Resources {

    /** The most resources a run may have (each one is a table row and a lock). */
    public static final int MAX = 1_000;

    private Resources() {
    }

    /** The history name of resource {@code row} of {@code count}. */
    public static String name(String base, int row, int count) {
        check(count);
        if (row < 0 || row >= count) {
            throw new IllegalArgumentException("resource row " + row + " outside 0.." + (count - 1));
        }
        return count == 1 ? base : base + "-" + row;
    }

    /** Throws when {@code count} is not a resource count a run accepts: 1 to {@link #MAX}. */
    public static int check(int count) {
        if (count < 1 || count > MAX) {
            throw new IllegalArgumentException("resources must be 1 to " + MAX + ", got " + count);
        }
        return count;
    }
}
