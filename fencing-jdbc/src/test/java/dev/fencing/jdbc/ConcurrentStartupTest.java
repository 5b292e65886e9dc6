package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Eight application instances rolled out at once on one fresh fence table and one fresh lease table: each with a
 * pool, a {@link JdbcFenceStore} and a {@link JdbcTokenIssuer} of its own, all verifying the same table at the same
 * instant. Every one must start. On MariaDB (InnoDB, REPEATABLE READ) the startup probes of one table used to
 * deadlock with each other, and an instance failed with "missing or unusable"; on PostgreSQL they serialized on one
 * key. Several rounds, each on new tables, half of them created by the instances themselves
 * ({@code createTableIfMissing(true)}).
 */
@Timeout(180)
class ConcurrentStartupTest {

    private static final int INSTANCES = 8;
    private static final int ROUNDS = 6;

    private final List<HikariDataSource> pools = new ArrayList<>();
    private final List<String> tables = new ArrayList<>();
    private JdbcTemplate admin;

    @AfterEach
    void close() {
        if (admin != null) {
            tables.forEach(t -> admin.execute("DROP TABLE IF EXISTS " + t));
        }
        pools.forEach(HikariDataSource::close);
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"MARIADB", "POSTGRESQL"})
    void eightInstancesStartingAtOnceOnOneTableAllPassTheirCheck(Database database) throws Exception {
        for (int i = 0; i <= INSTANCES; i++) {
            pools.add(database.newPool(2));
        }
        admin = new JdbcTemplate(pools.get(INSTANCES));
        JdbcDialect dialect = JdbcDialect.valueOf(database.name());
        List<String> failures = new CopyOnWriteArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(INSTANCES);
        try {
            for (int round = 1; round <= ROUNDS; round++) {
                String fenceTable = Database.uniqueTable("cfence");
                String leaseTable = Database.uniqueTable("clease");
                tables.add(fenceTable);
                tables.add(leaseTable);
                boolean create = round % 2 == 0;
                if (!create) {
                    admin.execute(dialect.createTableSql(fenceTable));
                    admin.execute(JdbcTable.LEASE.createTableSql(dialect, leaseTable));
                }
                CyclicBarrier start = new CyclicBarrier(INSTANCES);
                List<Future<?>> instances = new ArrayList<>();
                for (int i = 0; i < INSTANCES; i++) {
                    HikariDataSource pool = pools.get(i);
                    String name = "round " + round + (create ? " (creating the tables)" : "") + ", instance " + i;
                    instances.add(threads.submit(() -> {
                        JdbcFenceStore store = JdbcFenceStore.builder(pool).table(fenceTable)
                                .createTableIfMissing(create).build();
                        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(leaseTable)
                                .createTableIfMissing(create).build();
                        start.await(30, TimeUnit.SECONDS);
                        try {
                            store.verify();
                        } catch (RuntimeException e) {
                            failures.add(name + ", fence table: " + e.getMessage());
                        }
                        start.await(30, TimeUnit.SECONDS);
                        try {
                            issuer.verify();
                        } catch (RuntimeException e) {
                            failures.add(name + ", lease table: " + e.getMessage());
                        }
                        return null;
                    }));
                }
                for (Future<?> instance : instances) {
                    instance.get(60, TimeUnit.SECONDS);
                }
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(failures).as("instances that failed their startup check on " + database).isEmpty();
        // the probe rows were rolled back: the tables hold nothing
        for (String table : tables) {
            assertThat(admin.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class)).as(table).isZero();
        }
    }
}
