package dev.fencing.sample;

import java.io.PrintStream;
import java.util.List;

/**
 * Entry point. Default: the comparison table (exit 0 only if every fenced strategy blocked the zombie). With
 * {@code --serve}: a running workload with a Prometheus endpoint. With {@code --admin reset-floor RESOURCE}: the
 * recovery of a resource's max_seen ({@link AdminCommand}). {@code --help} lists the options; a bad option exits
 * with 2.
 */
public final class SampleApplication {

    private SampleApplication() {
    }

    public static void main(String[] args) throws Throwable {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws Throwable {
        if (args.length > 0 && args[0].equals("--admin")) {
            return AdminCommand.run(args, out, err);
        }
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println();
            err.print(Options.USAGE);
            return 2;
        }
        if (options.help()) {
            out.print(Options.USAGE);
            return 0;
        }
        if (options.serve()) {
            try (Dashboard dashboard = Dashboard.start(options, out)) {
                dashboard.awaitEnd();
            }
            return 0;
        }
        out.println("fencing sample: the canonical zombie race under each locking strategy");
        out.println();
        List<Row> rows = ComparisonTable.run(options, out);
        int code = ComparisonTable.exitCode(rows);
        out.println(code == 0 ? "OK: every fenced strategy blocked the stale holder's write."
                : "FAILED: a fenced strategy let the zombie through (or none could run).");
        return code;
    }
}
