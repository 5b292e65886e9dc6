package dev.fencing.r2dbc;

import dev.fencing.store.sql.FenceSql;

import java.util.Locale;

/**
 * The database an {@link R2dbcFenceStore} runs on: chosen with {@link R2dbcFenceStore.Builder#dialect} or detected
 * from the connection factory's metadata name. It selects the fence table's SQL, written once in fencing-core and
 * shared with fencing-jdbc, and writes its parameter markers the way the driver reads them.
 */
public enum R2dbcDialect {

    /** PostgreSQL with {@code r2dbc-postgresql}: markers {@code $1, $2, ...}. */
    POSTGRESQL("PostgreSQL", FenceSql.POSTGRESQL),

    /** MariaDB with {@code r2dbc-mariadb}: markers {@code ?}. */
    MARIADB("MariaDB", FenceSql.MARIADB);

    private final String productName;
    private final FenceSql sql;

    R2dbcDialect(String productName, FenceSql sql) {
        this.productName = productName;
        this.sql = sql;
    }

    /** The dialect for {@code ConnectionFactoryMetadata.getName()}, or {@code null} if unsupported. */
    static R2dbcDialect forProductName(String name) {
        String lower = name == null ? "" : name.toLowerCase(Locale.ROOT);
        for (R2dbcDialect dialect : values()) {
            if (lower.contains(dialect.productName.toLowerCase(Locale.ROOT))) {
                return dialect;
            }
        }
        return null;
    }

    /** The database's name as its driver reports it. */
    String productName() {
        return productName;
    }

    /** The shared SQL of the fence table for this database. */
    FenceSql sql() {
        return sql;
    }

    /** {@code sql} (written with {@code ?} markers) with the driver's markers. */
    String nativeMarkers(String sql) {
        if (this != POSTGRESQL) {
            return sql;
        }
        StringBuilder out = new StringBuilder(sql.length() + 8);
        int n = 0;
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c == '?') {
                out.append('$').append(++n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** The schema script as messages name it: {@code classpath:dev/fencing/store/sql/schema-postgresql.sql}. */
    String script() {
        return "classpath:" + sql.schemaResource();
    }
}
