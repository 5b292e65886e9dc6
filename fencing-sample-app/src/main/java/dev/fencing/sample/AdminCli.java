package dev.fencing.sample;

import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.recovery.ResetRefusedException;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * What the {@code --admin} commands share: the database options ({@link Database}) and one way from a command line
 * to an exit code ({@link #run}): 0 when done or for {@code --help}, 2 on a bad option or input (nothing changed, the
 * usage printed), 1 when refused ({@link ResetRefusedException}) or failed.
 */
final class AdminCli {

    private AdminCli() {
    }

    /** Parses the command line; {@code null} means {@code --help}. */
    interface Parser<R> {
        R parse(String[] args);
    }

    /** Carries out a parsed command, printing its result. */
    interface Action<R> {
        void execute(R request, PrintStream out) throws SQLException;
    }

    static <R> int run(String usage, String[] args, PrintStream out, PrintStream err, Parser<R> parser,
                       Action<R> action) {
        R request;
        try {
            request = parser.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println();
            err.print(usage);
            return 2;
        }
        if (request == null) {
            out.print(usage);
            return 0;
        }
        try {
            action.execute(request, out);
            return 0;
        } catch (SQLException e) {
            err.println("error: no JDBC driver for the --jdbc-url given: " + e.getMessage());
            return 2;
        } catch (ResetRefusedException e) {
            err.println("refused: " + e.getMessage());
            return 1;
        } catch (IllegalArgumentException e) {
            err.println("refused: " + e.getMessage());
            return 2;
        } catch (RuntimeException e) {
            err.println("failed: " + e.getMessage());
            return 1;
        }
    }

    /** The value of {@code option} as a positive number, or a refusal naming the option and the value. */
    static long positive(String option, String value, long max) {
        long number;
        try {
            number = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option '" + option + "' needs a number, was '" + value + "'");
        }
        if (number <= 0) {
            throw new IllegalArgumentException("option '" + option + "' needs a positive number, was " + number);
        }
        if (number > max) {
            throw new IllegalArgumentException("option '" + option + "' needs a number up to " + max + ", was "
                    + number);
        }
        return number;
    }

    /** The database options every command takes: where the fence table (and the lease table) are. */
    static final class Database {

        private String url;
        private String user;
        private String password = "";
        private String fenceTable = JdbcFenceStore.DEFAULT_TABLE;
        private String leaseTable = JdbcTokenIssuer.DEFAULT_TABLE;
        private boolean leaseTableGiven;

        /**
         * Takes {@code args[i]} (and its value) when it is a database option.
         *
         * @return the index of the last argument taken, or -1 when {@code args[i]} is not a database option
         */
        int accept(String[] args, int i) {
            String arg = args[i];
            switch (arg) {
                case "--jdbc-url" -> url = Options.parse(arg, Options.value(args, i)).jdbcUrl(); // its URL check
                case "--jdbc-user" -> user = Options.value(args, i);
                case "--jdbc-password" -> password = Options.value(args, i);
                case "--fence-table" -> fenceTable = Options.value(args, i);
                case "--lease-table" -> {
                    leaseTable = Options.value(args, i);
                    leaseTableGiven = true;
                }
                default -> {
                    return -1;
                }
            }
            return i + 1;
        }

        /** Fails when no {@code --jdbc-url} was given; defaults the user by database. */
        Database require(String command) {
            if (url == null) {
                throw new IllegalArgumentException(command + " needs --jdbc-url: the database of the fence table");
            }
            if (user == null) {
                user = SampleDatabase.defaultUser(url);
            }
            return this;
        }

        DataSource dataSource() throws SQLException {
            return new SimpleDriverDataSource(DriverManager.getDriver(url), url, user, password);
        }

        String fenceTable() {
            return fenceTable;
        }

        String leaseTable() {
            return leaseTable;
        }

        /** Whether {@code --lease-table} was given (not the default). */
        boolean leaseTableGiven() {
            return leaseTableGiven;
        }
    }
}
