package dev.fencing.verify.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** For the tests: how many tables whose name starts with {@code prefix_} a database holds. */
public final class TablesLeft {

    private TablesLeft() {
    }

    public static int count(Database db, String prefix) throws SQLException {
        String sql = db.kind() == DatabaseKind.POSTGRESQL
                ? "SELECT count(*) FROM pg_tables WHERE tablename LIKE ?"
                : "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() "
                        + "AND table_name LIKE ?";
        try (Connection c = db.connect(); PreparedStatement p = c.prepareStatement(sql)) {
            p.setString(1, prefix + "\\_%");
            try (ResultSet r = p.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
