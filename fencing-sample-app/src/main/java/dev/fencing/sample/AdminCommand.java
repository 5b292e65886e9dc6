package dev.fencing.sample;

import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.recovery.ResetResult;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.SQLException;
import java.util.Map;

/**
 * {@code --admin reset-floor RESOURCE}: the documented way back after a bad token raised a resource's max_seen in an
 * application's JDBC fence table, through {@link MaxSeenReset} with the JDBC lease table as the issuer (or, with
 * {@code --no-lease}, an explicit {@code --to} value and {@code --override}). Exit 0 when lowered, 1 when refused
 * (a lease is held, nothing to lower), 2 on a bad option. {@code --admin raise-floors}: {@link RaiseFloorsCommand};
 * {@code --admin compact}: {@link CompactCommand}.
 */
final class AdminCommand {

    static final String USAGE = """
            usage: java -jar fencing-sample-app.jar --admin reset-floor RESOURCE --jdbc-url URL [options]

            Lowers max_seen of RESOURCE in the fence table to the highest token the JDBC lease table issued for it
            (never below), so that the next real holder is accepted again while every earlier token stays refused.
            Logged at WARNING and refused while a lease on RESOURCE is held.

              --jdbc-url URL          the application's database (jdbc:postgresql:, jdbc:mariadb:, jdbc:h2:)
              --jdbc-user USER        database user (default: postgres, root or sa by URL)
              --jdbc-password PASS    database password (default: empty)
              --fence-table NAME      the fence table (default fencing_max_seen)
              --lease-table NAME      the JDBC lease table that issued the tokens (default fencing_lease)
              --no-lease              the tokens come from another issuer: needs --to and --override
              --offset NAME           the lease table's tokens carry the issuer offset stored under NAME
                                      (fencing.issuer.offset.name): its base is added to them
              --issuer-base-table T   the issuer base table (default fencing_issuer_base); a reset below the
                                      highest base stored there is refused, with or without --offset
              --to N                  an explicit new max_seen (never below the lease table's highest token)
              --override              required with --to: you vouch that nothing above N was issued
              --force                 reset even while a lease on RESOURCE is held (its holder is refused too)
              --actor NAME            who asks, for the log (default: the user.name system property)
            """;

    private AdminCommand() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length > 1 && args[1].equals("raise-floors")) {
            return RaiseFloorsCommand.run(args, out, err);
        }
        if (args.length > 1 && args[1].equals("compact")) {
            return CompactCommand.run(args, out, err);
        }
        return AdminCli.run(USAGE, args, out, err, Request::parse, AdminCommand::execute);
    }

    private static void execute(Request request, PrintStream out) throws SQLException {
        DataSource dataSource = request.database.dataSource();
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(request.database.fenceTable()).build();
        Map<String, Long> bases = request.offset.stored(dataSource);
        if (request.offset.missingNote() != null) {
            out.println(request.offset.missingNote());
        }
        IssuedTokens issuer = request.noLease ? null : request.offset.issued(
                JdbcTokenIssuer.builder(dataSource).table(request.database.leaseTable()).build(), bases);
        MaxSeenReset reset = new MaxSeenReset(new JdbcFenceAdmin(store), issuer, new AdminMetrics(null))
                .withStoredBases(() -> bases);
        ResetResult result = request.to == null
                ? reset.toHighestIssued(request.resource, request.actor, request.force)
                : reset.toValue(request.resource, request.to, request.actor, request.override, request.force);
        out.println("max_seen of '" + result.resource() + "' lowered from " + result.previous() + " to "
                + result.current() + (result.highestIssued() >= 0
                ? " (highest issued token " + result.highestIssued() + ")" : "") + " by " + result.actor());
    }

    /** The parsed command line; {@code null} from {@link #parse} means help. */
    private record Request(String resource, AdminCli.Database database, OffsetOptions offset, boolean noLease,
                           Long to, boolean override, boolean force, String actor) {

        static Request parse(String[] args) {
            if (args.length < 2) {
                throw new IllegalArgumentException("'--admin' needs a command: reset-floor RESOURCE, "
                        + "raise-floors or compact");
            }
            if (args[1].equals("--help")) {
                return null;
            }
            if (!args[1].equals("reset-floor")) {
                throw new IllegalArgumentException("unknown admin command '" + args[1]
                        + "'; known: reset-floor, raise-floors, compact");
            }
            if (args.length < 3 || args[2].startsWith("--")) {
                throw new IllegalArgumentException("'reset-floor' needs a RESOURCE, for example accounts:42");
            }
            String resource = args[2];
            AdminCli.Database database = new AdminCli.Database();
            OffsetOptions offset = new OffsetOptions();
            boolean noLease = false;
            Long to = null;
            boolean override = false;
            boolean force = false;
            String actor = System.getProperty("user.name", "unknown");
            for (int i = 3; i < args.length; i++) {
                int taken = Math.max(database.accept(args, i), offset.accept(args, i));
                if (taken >= 0) {
                    i = taken;
                    continue;
                }
                String arg = args[i];
                switch (arg) {
                    case "--no-lease" -> noLease = true;
                    case "--to" -> to = number(arg, Options.value(args, i++));
                    case "--override" -> override = true;
                    case "--force" -> force = true;
                    case "--actor" -> actor = Options.value(args, i++);
                    default -> throw new IllegalArgumentException("unknown option '" + arg + "' for reset-floor");
                }
            }
            database.require("reset-floor");
            if (noLease && to == null) {
                throw new IllegalArgumentException("--no-lease needs --to N and --override: without the lease table "
                        + "nothing tells what was issued");
            }
            offset.requireLease(noLease, "reset-floor");
            return new Request(resource, database, offset, noLease, to, override, force, actor);
        }

        private static long number(String option, String value) {
            try {
                return Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("option '" + option + "' needs a number, was '" + value + "'");
            }
        }
    }
}
