package dev.fencing.boot.autoconfigure;

import java.util.regex.Pattern;

/**
 * The check of a table name property when it is bound, so that a bad one fails naming the property rather than the
 * builder it reaches: the same rule as the stores', plain identifiers (letters, digits, underscores), optionally
 * schema-qualified.
 */
final class TableNames {

    private static final Pattern NAME = Pattern.compile(
            "[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private TableNames() {
    }

    /** {@code table}, when it is a plain identifier; otherwise an error naming {@code property} and the value. */
    static String require(String property, String table) {
        if (table == null || !NAME.matcher(table).matches()) {
            throw new IllegalArgumentException(property + " '" + table + "' is not a table name: use letters, digits "
                    + "and underscores, optionally schema-qualified (schema.table), at most 63 each");
        }
        return table;
    }
}
