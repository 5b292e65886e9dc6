package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
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
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * MariaDB, the one database on which compaction is documented safe for checks at any isolation level (its check reads
 * the family floor in a locking read, current whatever the snapshot): a transaction at REPEATABLE READ or
 * SERIALIZABLE whose snapshot was taken before a compaction folded a resource (and, the first time, created its
 * family's floor) judges a zombie's token for it, and for a new resource of the family, against the new floor.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class MariaDbSnapshotBeforeCompactionTest {

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private DataSourceTransactionManager tm;
    private String table;
    private String other;

    @BeforeAll
    void setUp() {
        pool = Database.MARIADB.newPool(4);
        jdbc = new JdbcTemplate(pool);
        tm = new DataSourceTransactionManager(pool);
    }

    @AfterEach
    void dropTables() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        jdbc.execute("DROP TABLE IF EXISTS " + other);
    }

    @AfterAll
    void tearDown() {
        pool.close();
    }

    @ParameterizedTest(name = "isolation={0}")
    @ValueSource(strings = {"REPEATABLE_READ", "SERIALIZABLE"})
    void aSnapshotTakenBeforeTheCompactionIsJudgedAgainstTheNewFloor(String isolation) throws Throwable {
        table = Database.uniqueTable("rrcompact");
        other = Database.uniqueTable("rrsnap");
        jdbc.execute("CREATE TABLE " + other + " (id BIGINT PRIMARY KEY)");
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(table)
                .createTableIfMissing(true).lockTimeout(Duration.ofSeconds(1)).build();
        store.verify();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        String family = "rr" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String r = family + ":1";
        store.fence(r, new FencingToken(r, 10, "a"), () -> null);
        Thread.sleep(20);

        TransactionTemplate snapshotFirst = new TransactionTemplate(tm);
        snapshotFirst.setIsolationLevelName("ISOLATION_" + isolation);
        Throwable zombie = catchThrowable(() -> snapshotFirst.executeWithoutResult(status -> {
            // the snapshot, taken by a read of another table (a read of the fence table would hold its metadata
            // lock, which compaction's LOCK TABLES waits for)
            jdbc.queryForList("SELECT id FROM " + other, Long.class);
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
        assertThat(zombie).isInstanceOf(StaleTokenException.class);
        assertThat(admin.familyFloor(family)).hasValue(10);

        // again for a resource of the family never seen, now that its floor row exists
        store.fence(family + ":2", new FencingToken(family + ":2", 30, "a"), () -> null);
        Thread.sleep(20);
        String fresh = family + ":3";
        Throwable newcomer = catchThrowable(() -> snapshotFirst.executeWithoutResult(status -> {
            jdbc.queryForList("SELECT id FROM " + other, Long.class);
            try {
                assertThat(CompletableFuture.supplyAsync(() -> admin.compact(Duration.ZERO, 10,
                        IssuerFloors.ONE_SEQUENCE)).get(30, TimeUnit.SECONDS).folded()).isEqualTo(1);
                store.fence(fresh, new FencingToken(fresh, 20, "zombie"), () -> null);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }));
        assertThat(newcomer).isInstanceOf(StaleTokenException.class);
        assertThat(admin.familyFloor(family)).hasValue(30);
    }
}
