package dev.fencing.sample;

import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.token.FencingToken;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;

/**
 * The protected resource of every strategy: a table of notes in a database (embedded H2 by default), and a JDBC
 * fence store beside it. Table names are unique per run and dropped on close, so a shared server stays clean.
 */
final class SampleDatabase implements AutoCloseable {

    final DataSource dataSource;
    final DataSourceTransactionManager transactions;
    final JdbcTemplate jdbc;
    final String notes;
    final String fenceTable;
    final String leaseTable;
    final JdbcFenceStore fence;
    final String description;

    SampleDatabase(Options options) {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String url = options.jdbcUrl() != null ? options.jdbcUrl()
                : "jdbc:h2:mem:fencing-sample-" + suffix + ";DB_CLOSE_DELAY=-1";
        String user = options.jdbcUser() != null ? options.jdbcUser() : defaultUser(url);
        try {
            Driver driver = DriverManager.getDriver(url);
            this.dataSource = new SimpleDriverDataSource(driver, url, user, options.jdbcPassword());
        } catch (SQLException e) {
            throw new IllegalArgumentException("no JDBC driver for '" + url + "'", e);
        }
        this.description = options.jdbcUrl() != null ? url : "embedded H2";
        this.transactions = new DataSourceTransactionManager(dataSource);
        this.jdbc = new JdbcTemplate(dataSource);
        this.notes = "fencing_sample_notes_" + suffix;
        this.fenceTable = "fencing_sample_fence_" + suffix;
        this.leaseTable = "fencing_sample_lease_" + suffix;
        jdbc.execute("CREATE TABLE " + notes + " (k VARCHAR(128) NOT NULL PRIMARY KEY, v VARCHAR(64))");
        this.fence = JdbcFenceStore.builder(dataSource).transactionManager(transactions).table(fenceTable)
                .createTableIfMissing(true).build();
    }

    /** The user when none is given: postgres for PostgreSQL, root for MariaDB, sa for H2. */
    static String defaultUser(String url) {
        return url.startsWith("jdbc:postgresql:") ? "postgres" : url.startsWith("jdbc:mariadb:") ? "root" : "sa";
    }

    /** A write that trusts its caller. */
    void writeUnfenced(String key, String value) {
        new TransactionTemplate(transactions).executeWithoutResult(status -> put(key, value));
    }

    /** A write the database checks: max_seen of the token's resource, in the write's transaction. */
    void writeFenced(FencingToken token, String value) throws Throwable {
        fence.fence(token.resource(), token, () -> {
            put(token.resource(), value);
            return null;
        });
    }

    void put(String key, String value) {
        jdbc.update("DELETE FROM " + notes + " WHERE k = ?", key);
        jdbc.update("INSERT INTO " + notes + " (k, v) VALUES (?, ?)", key, value);
    }

    String read(String key) {
        return jdbc.query("SELECT v FROM " + notes + " WHERE k = ?", rs -> rs.next() ? rs.getString(1) : null, key);
    }

    @Override
    public void close() {
        for (String table : new String[] {notes, fenceTable, leaseTable}) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }
}
