package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Tells a failure because a table (or its schema) does not exist from every other failure, by the SQL state the
 * database reported: a caller may read "nothing stored" from the first, never from a database it could not read.
 */
final class MissingTable {

    /**
     * PostgreSQL's undefined table and schema, MariaDB's and H2's table not found, H2's variants of it (with candidate
     * names, in an empty database) and its schema not found.
     */
    private static final Set<String> STATES = Set.of("42P01", "3F000", "42S02", "42S03", "42S04", "90079");

    private MissingTable() {
    }

    /** Whether the first SQL state in {@code failure}'s causes says the table or its schema is missing. */
    static boolean causes(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                return STATES.contains(sql.getSQLState());
            }
        }
        return false;
    }

    /**
     * Whether the database is MariaDB and its {@code information_schema} lists no table {@code table} (validated,
     * optionally {@code schema.table}; unqualified in the connection's database). A caller that reads "nothing stored"
     * from a missing table asks this first on MariaDB, whose driver logs every failed query as a WARN that users take
     * for a fault. {@code false} elsewhere, when the table is listed and when this cannot be told: the query itself
     * then decides.
     */
    static boolean listedAsAbsentOnMariaDb(JdbcTemplate jdbc, String table) {
        try {
            return Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) c -> absent(c, table)));
        } catch (DataAccessException e) {
            return false; // unreachable or unreadable: the caller's own query fails and says so
        }
    }

    private static boolean absent(Connection connection, String table) throws SQLException {
        if (JdbcDialect.forProductName(connection.getMetaData().getDatabaseProductName()) != JdbcDialect.MARIADB) {
            return false;
        }
        int dot = table.indexOf('.');
        String sql = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                + (dot > 0 ? "?" : "DATABASE()") + " AND TABLE_NAME = ?";
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            if (dot > 0) {
                statement.setString(1, table.substring(0, dot));
                statement.setString(2, table.substring(dot + 1));
            } else {
                statement.setString(1, table);
            }
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getLong(1) == 0;
            }
        }
    }
}
