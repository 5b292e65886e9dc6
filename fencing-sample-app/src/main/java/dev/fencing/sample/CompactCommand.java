package dev.fencing.sample;

import dev.fencing.FencingConfigurationException;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.metrics.CompactionMetrics;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.CompactionRun;
import dev.fencing.retention.IssuerFloors;

import org.springframework.dao.DataAccessException;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * {@code --admin compact}: the command-line form of the starter's scheduled compaction, through {@link CompactionRun}
 * on an application's JDBC fence table: resources idle for longer than {@code --idle-for} are folded into their
 * family's floor, and with the JDBC lease table as the issuer its idle rows too. Exit 0 when done (also when nothing
 * was idle), 2 on a bad option, 1 on a failure.
 */
final class CompactCommand {

    static final String USAGE = """
            usage: java -jar fencing-sample-app.jar --admin compact --jdbc-url URL --idle-for DURATION [options]

            Folds every per-entity resource (accounts:42) that accepted no token for DURATION into its family's
            floor (accounts), one transaction per batch, safe while the application runs: a folded resource is
            judged against the floor, so a token refused before stays refused. The JDBC lease table is told the
            floors first and its own idle rows are folded the same way.

              --jdbc-url URL          the application's database (jdbc:postgresql:, jdbc:mariadb:, jdbc:h2:)
              --jdbc-user USER        database user (default: postgres, root or sa by URL)
              --jdbc-password PASS    database password (default: empty)
              --idle-for DURATION     how long a resource must have been idle: 30d, 12h, 90m or ISO-8601 (P30D)
              --batch-size N          resources per transaction (default 1000)
              --fence-table NAME      the fence table (default fencing_max_seen)
              --lease-table NAME      the JDBC lease table that issues the tokens (default fencing_lease)
              --one-sequence          the tokens come from ZooKeeper or etcd (one sequence for every resource),
                                      not from a lease table: no issuer floor is raised, no lease row folded
            """;

    private CompactCommand() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        return AdminCli.run(USAGE, args, out, err, Request::parse, CompactCommand::execute);
    }

    private static void execute(Request request, PrintStream out) throws SQLException {
        DataSource dataSource = request.database.dataSource();
        String fenceTable = request.database.fenceTable();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(JdbcFenceStore.builder(dataSource).table(fenceTable).build());
        if (request.oneSequence) {
            refuseLeases(dataSource, request.database.leaseTable());
        }
        JdbcTokenIssuer issuer = request.oneSequence ? null
                : JdbcTokenIssuer.builder(dataSource).table(request.database.leaseTable()).build();
        CompactionRun run = new CompactionRun(admin, issuer == null ? IssuerFloors.ONE_SEQUENCE : issuer, issuer,
                request.idleFor, request.batchSize, new CompactionMetrics(null));
        CompactionResult result = run.runOnce();
        out.println("folded " + result.folded() + " resources of " + fenceTable + " idle for over " + request.idleFor
                + " into the floors of " + result.families() + " families, in " + result.batches() + " transactions"
                + (issuer == null ? "" : "; lease table " + request.database.leaseTable() + " compacted too"));
    }

    /**
     * {@code --one-sequence} claims no lease table issues the tokens: a lease table with leases in it says otherwise,
     * and folding without raising its floors would refuse every later token of the folded families.
     */
    private static void refuseLeases(DataSource dataSource, String leaseTable) {
        List<String> leases;
        try {
            leases = JdbcTokenIssuer.builder(dataSource).table(leaseTable).build().issuedResources(null, 1);
        } catch (FencingConfigurationException | DataAccessException noSuchTable) {
            return; // no lease table: the tokens come from elsewhere, as claimed
        }
        if (!leases.isEmpty()) {
            throw new IllegalArgumentException("--one-sequence says the tokens come from one sequence (ZooKeeper, "
                    + "etcd), but the lease table " + leaseTable + " holds leases (" + leases.get(0) + ", ...): its "
                    + "tokens are counted per resource, and folding without raising its floors would refuse them; "
                    + "drop --one-sequence (nothing was changed)");
        }
    }

    /** The parsed command line; {@code null} from {@link #parse} means help. */
    private record Request(AdminCli.Database database, boolean oneSequence, Duration idleFor, int batchSize) {

        static Request parse(String[] args) {
            AdminCli.Database database = new AdminCli.Database();
            boolean oneSequence = false;
            Duration idleFor = null;
            int batchSize = 1000;
            for (int i = 2; i < args.length; i++) {
                int taken = database.accept(args, i);
                if (taken >= 0) {
                    i = taken;
                    continue;
                }
                String arg = args[i];
                switch (arg) {
                    case "--help" -> {
                        return null;
                    }
                    case "--one-sequence" -> oneSequence = true;
                    case "--idle-for" -> idleFor = duration(arg, Options.value(args, i++));
                    case "--batch-size" -> batchSize = (int) AdminCli.positive(arg, Options.value(args, i++),
                            Integer.MAX_VALUE);
                    default -> throw new IllegalArgumentException("unknown option '" + arg + "' for compact");
                }
            }
            database.require("compact");
            if (oneSequence && database.leaseTableGiven()) {
                throw new IllegalArgumentException("--one-sequence and --lease-table contradict each other: with a "
                        + "lease table the tokens are counted per resource, not one sequence");
            }
            if (idleFor == null) {
                throw new IllegalArgumentException("compact needs --idle-for: how long a resource must have been "
                        + "idle (for example 30d); there is no default, so that nothing is folded by surprise");
            }
            return new Request(database, oneSequence, idleFor, batchSize);
        }

        /** 30d, 12h, 90m, 45s or an ISO-8601 duration; positive. */
        static Duration duration(String option, String value) {
            Duration parsed;
            try {
                if (value.matches("\\d+[dhms]")) {
                    long amount = Long.parseLong(value.substring(0, value.length() - 1));
                    parsed = switch (value.charAt(value.length() - 1)) {
                        case 'd' -> Duration.ofDays(amount);
                        case 'h' -> Duration.ofHours(amount);
                        case 'm' -> Duration.ofMinutes(amount);
                        default -> Duration.ofSeconds(amount);
                    };
                } else {
                    parsed = Duration.parse(value);
                }
            } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
                throw new IllegalArgumentException("option '" + option + "' needs a duration such as 30d, 12h, 90m "
                        + "or P30D, was '" + value + "'");
            }
            if (parsed.isNegative() || parsed.isZero()) {
                throw new IllegalArgumentException("option '" + option + "' needs a positive duration, was '" + value
                        + "'");
            }
            return parsed;
        }
    }
}
