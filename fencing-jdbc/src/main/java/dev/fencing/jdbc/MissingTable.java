package dev.fencing.jdbc;

import java.sql.SQLException;
import java.util.Set;

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
}
