package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What the JDBC store's MariaDB deadlock tests share: a pool on the local MariaDB, a fence table and the store on it,
 * a data table the fenced bodies write to, and the tables of {@link MariaDbDeadlock}; all dropped after the class.
 * Each test class extends it with a table prefix, a pool size and the store's lock timeout ({@code null}: the
 * default).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MariaDbDeadlockFixture {

    private final int poolSize;
    private final Duration lockTimeout;
    final String fence;
    final String data;
    final String locks;
    final String heavy;
    HikariDataSource pool;
    JdbcTemplate jdbc;
    DataSourceTransactionManager tm;
    JdbcFenceStore store;

    MariaDbDeadlockFixture(String prefix, int poolSize, Duration lockTimeout) {
        this.poolSize = poolSize;
        this.lockTimeout = lockTimeout;
        String suffix = prefix + "_" + java.util.UUID.randomUUID().toString().substring(0, 8);
        fence = "fence_" + suffix;
        data = "data_" + suffix;
        locks = "locks_" + suffix;
        heavy = "heavy_" + suffix;
    }

    @BeforeAll
    void setUp() {
        pool = Database.MARIADB.newPool(poolSize);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
        jdbc.execute(Database.MARIADB.createDataTable(data));
        MariaDbDeadlock.createTables(jdbc, locks, heavy);
        JdbcFenceStore.Builder builder = JdbcFenceStore.builder(pool).transactionManager(tm).table(fence)
                .createTableIfMissing(true);
        store = (lockTimeout == null ? builder : builder.lockTimeout(lockTimeout)).build();
        store.verify();
    }

    @AfterAll
    void tearDown() {
        for (String t : List.of(fence, data, locks, heavy)) {
            jdbc.execute("DROP TABLE IF EXISTS " + t);
        }
        pool.close();
    }

    /** {@code token}'s fenced call of {@code body}, in a transaction of its own. */
    void fenced(String r, FencingToken token, Runnable body) {
        new TransactionTemplate(tm).executeWithoutResult(s -> FencedCalls.fence(store, r, token, body));
    }

    /** A row of the data table written under {@code t}. */
    void insert(String r, FencingToken t) {
        jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)", r, t.value(), t.holder());
    }
}
