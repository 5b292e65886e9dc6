package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * PostgreSQL, where a transaction at REPEATABLE READ or SERIALIZABLE whose snapshot predates a compaction batch reads
 * the family floor as it was: a zombie's token for a resource the batch folded (5, against a folded max_seen of 10)
 * was accepted. A compacted store ({@link JdbcFenceStore.Builder#compacted}, or one whose admin compacted) refuses
 * checks in such transactions; READ COMMITTED, and a store that is not compacted, check as before.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class PostgresSnapshotBeforeCompactionTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private String table;
    private String other;

    @BeforeAll
    void setUp() {
        pool = Database.POSTGRESQL.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
    }

    @AfterEach
    void dropTables() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        if (other != null) {
            jdbc.execute("DROP TABLE IF EXISTS " + other);
        }
    }

    @AfterAll
    void tearDown() {
        pool.close();
    }

    private JdbcFenceStore store(boolean compacted) {
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(table)
                .createTableIfMissing(true).lockTimeout(Duration.ofSeconds(1)).compacted(compacted).build();
        store.verify();
        return store;
    }

    private TransactionTemplate at(String isolation) {
        TransactionTemplate template = new TransactionTemplate(tm);
        template.setIsolationLevelName("ISOLATION_" + isolation);
        return template;
    }

    @ParameterizedTest(name = "isolation={0}")
    @ValueSource(strings = {"REPEATABLE_READ", "SERIALIZABLE"})
    void aZombiesCheckInASnapshotTakenBeforeTheCompactionIsRefused(String isolation) throws Throwable {
        table = Database.uniqueTable("pgrrcompact");
        other = Database.uniqueTable("pgrrsnap");
        jdbc.execute("CREATE TABLE " + other + " (id BIGINT PRIMARY KEY)");
        JdbcFenceStore store = store(false); // compacted only by its admin's run below
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        String family = "pgrr" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String r = family + ":1";
        store.fence(r, new FencingToken(r, 10, "a"), () -> null);
        Thread.sleep(20);

        Throwable zombie = catchThrowable(() -> at(isolation).executeWithoutResult(status -> {
            jdbc.queryForList("SELECT id FROM " + other, Long.class); // the snapshot, before the batch
            try {
                assertThat(CompletableFuture.supplyAsync(() -> admin.compact(Duration.ZERO, 10,
                        IssuerFloors.ONE_SEQUENCE)).get(30, TimeUnit.SECONDS).folded()).isEqualTo(1);
                store.fence(r, new FencingToken(r, 5, "zombie"), () -> null);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }));
        assertThat(zombie).as("the zombie's check").isInstanceOf(OutsideTransactionException.class)
                .hasMessageContaining("isolation level").hasMessageContaining("compacted")
                .hasMessageContaining("'" + r + "'");
        assertThat(admin.familyFloor(family)).hasValue(10);
        assertThat(admin.maxSeen(r)).isEmpty(); // folded, and the refused check wrote nothing
    }

    @Test
    void aCompactedStoreChecksAtReadCommittedAndAStoreNotCompactedAtAnyLevel() {
        table = Database.uniqueTable("pgrrcompact");
        other = null;
        JdbcFenceStore compacted = store(true);
        String r = "pgrr" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + ":1";
        assertThatThrownBy(() -> at("REPEATABLE_READ").executeWithoutResult(status -> fence(compacted, r, 1)))
                .isInstanceOf(OutsideTransactionException.class).hasMessageContaining("REPEATABLE READ");
        at("READ_COMMITTED").executeWithoutResult(status -> fence(compacted, r, 2));
        at("DEFAULT").executeWithoutResult(status -> fence(compacted, r, 3));
        JdbcFenceStore notCompacted = store(false);
        at("SERIALIZABLE").executeWithoutResult(status -> fence(notCompacted, r, 4));
        assertThat(new JdbcFenceAdmin(notCompacted).maxSeen(r)).hasValue(4);
    }

    private static void fence(JdbcFenceStore store, String resource, long value) {
        try {
            store.fence(resource, new FencingToken(resource, value, "h"), () -> null);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
