package dev.fencing.sample;

import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.FloorRaiseResult;
import dev.fencing.recovery.IssuedTokens;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code --admin raise-floors}: the step after restoring an older backup of an application's JDBC fence table, before
 * traffic resumes, through {@link FloorRaise}: every resource's max_seen goes up to at least the JDBC lease table's
 * highest token for it and to at least {@code --at-least N}. Exit 0 when done (also when nothing needed raising), 2 on
 * a bad option, 1 on a failure.
 */
final class RaiseFloorsCommand {

    static final String USAGE = """
            usage: java -jar fencing-sample-app.jar --admin raise-floors --jdbc-url URL [options]

            After restoring an older backup of the fence table, and before traffic resumes: raises max_seen of every
            resource in the fence table to at least the highest token the JDBC lease table issued for it (one below
            it while a lease is held, so the current holder keeps writing) and to at least N. Never lowers anything;
            running it twice changes nothing. Logged at WARNING.

              --jdbc-url URL          the application's database (jdbc:postgresql:, jdbc:mariadb:, jdbc:h2:)
              --jdbc-user USER        database user (default: postgres, root or sa by URL)
              --jdbc-password PASS    database password (default: empty)
              --fence-table NAME      the fence table (default fencing_max_seen)
              --lease-table NAME      the JDBC lease table that issues the tokens (default fencing_lease)
              --no-lease              the tokens come from another issuer: needs --at-least
              --offset NAME           the lease table's tokens carry the issuer offset stored under NAME
                                      (fencing.issuer.offset.name): its base is added to them
              --issuer-base-table T   the issuer base table (default fencing_issuer_base); a floor below the
                                      highest base stored there is refused, with or without --offset
              --at-least N            a floor for every resource: above every token issued before the restore
                                      (the lease table was restored too, the issuer is another service, or
                                      resources were created after the backup)
              --resource NAME         also raise NAME, which the restored table may lack (created after the
                                      backup); repeatable
              --family NAME           also give family NAME a floor (reg:eu for keys reg:eu:7, which a key with
                                      a colon of its own makes): its keys without a row are judged against it;
                                      the families of the keys in the tables get one without it; repeatable
              --actor NAME            who asks, for the log (default: the user.name system property)
            """;

    private RaiseFloorsCommand() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        return AdminCli.run(USAGE, args, out, err, Request::parse, RaiseFloorsCommand::execute);
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
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        FloorRaiseResult result = new FloorRaise(admin, admin, issuer, new AdminMetrics(null))
                .withStoredBases(() -> bases)
                .raiseAll(request.atLeast, request.actor, request.resources, request.families);
        out.println("raised max_seen of " + result.raised() + " of " + result.examined() + " resources in "
                + request.database.fenceTable() + " (" + (request.noLease ? "to " + request.atLeast
                : "to the lease table's highest tokens" + (request.atLeast > 0 ? ", at least " + request.atLeast : ""))
                + ") by " + result.actor());
    }

    /** The parsed command line; {@code null} from {@link #parse} means help. */
    private record Request(AdminCli.Database database, OffsetOptions offset, boolean noLease, long atLeast,
                           String actor, List<String> resources, List<String> families) {

        static Request parse(String[] args) {
            AdminCli.Database database = new AdminCli.Database();
            OffsetOptions offset = new OffsetOptions();
            boolean noLease = false;
            long atLeast = 0;
            String actor = System.getProperty("user.name", "unknown");
            List<String> resources = new ArrayList<>();
            List<String> families = new ArrayList<>();
            for (int i = 2; i < args.length; i++) {
                int taken = Math.max(database.accept(args, i), offset.accept(args, i));
                if (taken >= 0) {
                    i = taken;
                    continue;
                }
                String arg = args[i];
                switch (arg) {
                    case "--help" -> {
                        return null;
                    }
                    case "--no-lease" -> noLease = true;
                    case "--at-least" -> atLeast = AdminCli.positive(arg, Options.value(args, i++), Long.MAX_VALUE);
                    case "--actor" -> actor = Options.value(args, i++);
                    case "--resource" -> resources.add(Options.value(args, i++));
                    case "--family" -> families.add(Options.value(args, i++));
                    default -> throw new IllegalArgumentException("unknown option '" + arg + "' for raise-floors");
                }
            }
            database.require("raise-floors");
            if (noLease && atLeast == 0) {
                throw new IllegalArgumentException("--no-lease needs --at-least N: without the lease table nothing "
                        + "tells what was issued");
            }
            offset.requireLease(noLease, "raise-floors");
            return new Request(database, offset, noLease, atLeast, actor, List.copyOf(resources),
                    List.copyOf(families));
        }
    }
}
