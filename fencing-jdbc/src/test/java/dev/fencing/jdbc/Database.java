package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.util.Locale;
import java.util.UUID;

/**
 * The databases the tests run against: the PostgreSQL and MariaDB servers on loopback (as on the CI machine) and an
 * embedded H2. Each test class uses its own table names and drops them afterwards.
 */
enum Database {

    POSTGRESQL("jdbc:postgresql://127.0.0.1:5432/test", "postgres"),
    MARIADB("jdbc:mariadb://127.0.0.1:3306/test", "root"),
    H2("jdbc:h2:mem:fencing-tests;DB_CLOSE_DELAY=-1", "sa");

    final String url;
    final String user;

    Database(String url, String user) {
        this.url = url;
        this.user = user;
    }

    /** A new connection pool of its own, as a separate application instance would have. */
    HikariDataSource newPool(int size) {
        return newPool(size, url);
    }

    /** A pool of its own whose JDBC URL carries {@code properties} (for example {@code allowMultiQueries=true}). */
    HikariDataSource newPoolWith(int size, String properties) {
        return newPool(size, url + (url.contains("?") ? "&" : "?") + properties);
    }

    /** A pool on PostgreSQL whose connections work in {@code schema}. */
    static HikariDataSource postgresInSchema(int size, String schema) {
        return POSTGRESQL.newPool(size, POSTGRESQL.url + "?currentSchema=" + schema);
    }

    private HikariDataSource newPool(int size, String jdbcUrl) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword("");
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(10_000);
        config.setPoolName("fencing-test-" + name().toLowerCase(Locale.ROOT));
        return new HikariDataSource(config);
    }

    /** A table name no other test run uses. */
    static String uniqueTable(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** SQL for an append-only data table with an insertion-ordered id. */
    String createDataTable(String table) {
        return switch (this) {
            case POSTGRESQL -> "CREATE TABLE " + table
                    + " (id BIGSERIAL PRIMARY KEY, k VARCHAR(64), token BIGINT, v VARCHAR(64))";
            case MARIADB -> "CREATE TABLE " + table
                    + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(64), token BIGINT, v VARCHAR(64))";
            case H2 -> "CREATE TABLE " + table
                    + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(64), token BIGINT, v VARCHAR(64))";
        };
    }
}
