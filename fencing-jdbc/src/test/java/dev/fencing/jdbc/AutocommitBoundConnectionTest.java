package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A fenced call in a transaction of another manager (another DataSource's, a resourceless one as Spring Batch's), when
 * a plain JdbcTemplate statement on the store's DataSource has already bound an autocommit connection of it to that
 * transaction's synchronization. A store built without a transaction manager joined that connection, so its check
 * committed at once and released the fence row: 34 wrote while 33's body ran, and 33 committed after it (a review
 * found it). It now runs the call in a transaction of its own, as a store given a plain DataSourceTransactionManager
 * does: 34 waits for the row and is refused as busy.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class AutocommitBoundConnectionTest {

    private HikariDataSource pg;
    private HikariDataSource other;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;
    private final String fence = "acb_fence_" + java.util.UUID.randomUUID().toString().substring(0, 8);
    private final String data = "acb_data_" + java.util.UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    void setUp() {
        pg = Database.POSTGRESQL.newPool(4);
        other = Database.H2.newPool(2);
        jdbc = new JdbcTemplate(pg);
        jdbc.execute("DROP TABLE IF EXISTS " + fence);
        jdbc.execute("DROP TABLE IF EXISTS " + data);
        jdbc.execute(Database.POSTGRESQL.createDataTable(data));
        store = JdbcFenceStore.builder(pg).table(fence).createTableIfMissing(true)
                .lockTimeout(Duration.ofSeconds(2)).build();
        store.verifyTable();
    }

    @AfterAll
    void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS " + fence);
        jdbc.execute("DROP TABLE IF EXISTS " + data);
        pg.close();
        other.close();
    }

    private void fenced(String r, FencingToken t, Runnable body) {
        FencedCalls.fence(store, r, t, body);
    }

    private void insert(String r, FencingToken t) {
        jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)", r, t.value(), t.holder());
    }

    @Test
    @Timeout(60)
    void aCallInAnotherManagersTransactionIsNotCheckedInAutocommit() throws Exception {
        String r = "acb";
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        String[] newer = new String[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(new DataSourceTransactionManager(other))
                .executeWithoutResult(s -> {
                    jdbc.queryForObject("SELECT 1", Integer.class); // binds an autocommit connection of the store's
                    fenced(r, t33, () -> {
                        // a newer holder meanwhile: it must wait for this call's fence row (busy after 2 s) or be
                        // refused, never write before this body's write lands
                        newer[0] = CompletableFuture.supplyAsync(() -> {
                            try {
                                fenced(r, t34, () -> insert(r, t34));
                                return "ok";
                            } catch (RuntimeException e) {
                                return e.getClass().getSimpleName();
                            }
                        }, x -> new Thread(x).start()).join();
                        insert(r, t33);
                    });
                }));
        List<Long> rows = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
        System.out.println("autocommit: thrown=" + thrown + " newer(34)=" + newer[0] + " rows=" + rows);
        assertThat(thrown).isNull();
        assertThat(newer[0]).as("34 while 33 holds the fence row in the store's own transaction")
                .isEqualTo("FenceBusyException");
        assertThat(rows).as("tokens written, in commit order").containsExactly(10L, 33L);
    }

    /** Calibration: the same with the other manager listened to (as the starter or a store bean does). */
    @Test
    @Timeout(60)
    void calibrationWithTheOtherManagerListenedToItIsRefused() {
        String r = "acb2";
        DataSourceTransactionManager otherTm = new DataSourceTransactionManager(other);
        TransactionOrigins.listenTo(otherTm, "otherTm");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(otherTm).executeWithoutResult(s -> {
            jdbc.queryForObject("SELECT 1", Integer.class);
            fenced(r, new FencingToken(r, 33, "h33"), () -> { });
        }));
        System.out.println("autocommit listened: thrown=" + thrown);
        assertThat(thrown).isInstanceOf(OutsideTransactionException.class);
    }

    /** Spring Batch's ResourcelessTransactionManager, in short: a manager whose transactions bind nothing. */
    static final class Resourceless extends org.springframework.transaction.support.AbstractPlatformTransactionManager {
        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, org.springframework.transaction.TransactionDefinition definition) {
        }

        @Override
        protected void doCommit(org.springframework.transaction.support.DefaultTransactionStatus status) {
        }

        @Override
        protected void doRollback(org.springframework.transaction.support.DefaultTransactionStatus status) {
        }
    }

    /** The same with a resourceless manager (a Spring Batch step's), listened to: nothing of it is bound. */
    @Test
    @Timeout(60)
    void aCallInAListenedResourcelessManagersTransactionIsNotCheckedInAutocommit() throws Exception {
        String r = "acb3";
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        FencingToken t33 = new FencingToken(r, 33, "h33");
        FencingToken t34 = new FencingToken(r, 34, "h34");
        Resourceless batchTm = new Resourceless();
        TransactionOrigins.listenTo(batchTm, "batchTm");
        String[] newer = new String[1];
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(batchTm).executeWithoutResult(s -> {
            jdbc.queryForObject("SELECT 1", Integer.class); // a reader's statement binds an autocommit connection
            fenced(r, t33, () -> {
                newer[0] = CompletableFuture.supplyAsync(() -> {
                    try {
                        fenced(r, t34, () -> insert(r, t34));
                        return "ok";
                    } catch (RuntimeException e) {
                        return e.getClass().getSimpleName();
                    }
                }, x -> new Thread(x).start()).join();
                insert(r, t33);
            });
        }));
        List<Long> rows = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
        System.out.println("autocommit resourceless listened: thrown=" + thrown + " newer(34)=" + newer[0]
                + " rows=" + rows);
        assertThat(thrown).isNull();
        assertThat(newer[0]).isEqualTo("FenceBusyException");
        assertThat(rows).as("tokens written, in commit order").containsExactly(10L, 33L);
    }

    /** Calibration: the same as the resourceless case with the store given a plain DataSourceTransactionManager. */
    @Test
    @Timeout(60)
    void calibrationWithAPlainDataSourceTransactionManagerTheCheckHasATransaction() throws Exception {
        JdbcFenceStore plain = JdbcFenceStore.builder(pg).transactionManager(new DataSourceTransactionManager(pg))
                .table(fence).lockTimeout(Duration.ofSeconds(2)).build();
        plain.verifyTable();
        String r = "acb4";
        FencingToken seed = new FencingToken(r, 10, "seed");
        fenced(r, seed, () -> insert(r, seed));
        String[] newer = new String[1];
        Resourceless batchTm = new Resourceless();
        new TransactionTemplate(batchTm).executeWithoutResult(s -> {
            jdbc.queryForObject("SELECT 1", Integer.class);
            try {
                plain.fence(r, new FencingToken(r, 33, "h33"), () -> {
                    newer[0] = CompletableFuture.supplyAsync(() -> {
                        try {
                            fenced(r, new FencingToken(r, 34, "h34"), () -> insert(r, new FencingToken(r, 34, "h34")));
                            return "ok";
                        } catch (RuntimeException e) {
                            return e.getClass().getSimpleName();
                        }
                    }, x -> new Thread(x).start()).join();
                    insert(r, new FencingToken(r, 33, "h33"));
                    return null;
                });
            } catch (Throwable e) {
                throw new RuntimeException(e);
            }
        });
        List<Long> rows = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class, r);
        System.out.println("autocommit plain manager: newer(34)=" + newer[0] + " rows=" + rows);
        assertThat(newer[0]).isEqualTo("FenceBusyException");
        assertThat(rows).containsExactly(10L, 33L);
    }
}
