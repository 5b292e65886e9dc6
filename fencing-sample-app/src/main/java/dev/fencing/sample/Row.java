package dev.fencing.sample;

/**
 * One strategy's measured answer. {@code monotonic} and {@code blocked} are what was observed in this run, never
 * assumed; a skipped strategy says why.
 */
record Row(String strategy, boolean fenced, String tokens, Boolean monotonic, Boolean blocked, String finalData,
           String skipped) {

    static Row skipped(String strategy, boolean fenced, String reason) {
        return new Row(strategy, fenced, "-", null, null, "-", reason);
    }

    boolean ran() {
        return skipped == null;
    }
}
