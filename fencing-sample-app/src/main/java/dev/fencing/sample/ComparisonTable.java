package dev.fencing.sample;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs every strategy through the canonical race and prints the comparison: whether it produced a monotonic token
 * and whether the stale holder's write was blocked, as measured in this run.
 */
final class ComparisonTable {

    static final List<Strategy> STRATEGIES = List.of(new LeaseTrustStrategy(), new RedisStrategy(),
            new RedissonStrategy(false), new RedissonStrategy(true), new ZooKeeperStrategy(), new EtcdStrategy(),
            new HazelcastStrategy(), new FencedJdbcStrategy());

    private ComparisonTable() {
    }

    static List<Row> run(Options options, PrintStream out) throws Throwable {
        Progress progress = new Progress(out);
        List<Row> rows = new ArrayList<>();
        try (SampleDatabase db = new SampleDatabase(options)) {
            for (Strategy strategy : STRATEGIES) {
                Row row;
                try {
                    row = strategy.run(db, options, progress);
                } catch (Throwable e) {
                    row = Row.skipped(strategy.name(), false, "failed: " + e);
                }
                if (!row.ran()) {
                    progress.say(strategy.name(), "skipped: " + row.skipped());
                }
                rows.add(row);
            }
        }
        print(rows, out);
        return rows;
    }

    /** 0 when every fenced strategy that ran blocked the zombie and at least one ran; 1 otherwise. */
    static int exitCode(List<Row> rows) {
        boolean anyFenced = false;
        for (Row row : rows) {
            if (row.fenced() && row.ran()) {
                anyFenced = true;
                if (!Boolean.TRUE.equals(row.blocked()) || !Boolean.TRUE.equals(row.monotonic())) {
                    return 1;
                }
            }
        }
        return anyFenced ? 0 : 1;
    }

    static void print(List<Row> rows, PrintStream out) {
        String format = "%-48s | %-25s | %-20s | %-22s | %s%n";
        out.println();
        out.printf(format, "strategy", "produces monotonic token?", "stale write blocked?",
                "tokens (client 1, 2)", "final data");
        out.println("-".repeat(48) + "-+-" + "-".repeat(25) + "-+-" + "-".repeat(20) + "-+-" + "-".repeat(22) + "-+-"
                + "-".repeat(10));
        for (Row row : rows) {
            if (!row.ran()) {
                out.printf("%-48s | skipped: %s%n", row.strategy(), row.skipped());
                continue;
            }
            out.printf(format, row.strategy(), yesNo(row.monotonic()),
                    yesNo(row.blocked()) + (row.blocked() ? "" : " (corrupted)"), row.tokens(), row.finalData());
        }
        out.println();
    }

    private static String yesNo(Boolean value) {
        return value == null ? "-" : value ? "yes" : "NO";
    }
}
