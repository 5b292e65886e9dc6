package dev.fencing.verify.run;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

/** What a run may have left behind in the database: its tables, found by the run's table prefix. */
final class Leftovers {

    private Leftovers() {
    }

    /** How many tables named {@code <prefix>_...} exist in {@code url}'s database. */
    static int tables(String url, String prefix) throws Exception {
        try (Connection c = DriverManager.getConnection(url, "postgres", "");
             PreparedStatement p = c.prepareStatement("SELECT count(*) FROM pg_tables WHERE tablename LIKE ?")) {
            p.setString(1, prefix + "\\_%");
            try (ResultSet r = p.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
