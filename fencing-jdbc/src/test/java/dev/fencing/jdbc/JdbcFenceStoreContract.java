package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStore;
import dev.fencing.testsupport.FenceStoreContract;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The store contract on a real database, plus what only a database store must do: roll back with the write, join
 * the caller's transaction, survive a restart, order concurrent writes by token, and refuse bad configuration.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcFenceStoreContract extends FenceStoreContract {

    protected HikariDataSource dataSource;
    protected JdbcTemplate jdbc;
    protected DataSourceTransactionManager transactionManager;
    protected String fenceTable;
    protected String dataTable;
    protected JdbcFenceStore store;
    protected JdbcFenceAdmin admin;

    abstract Database database();

    /** The pool the stores under test run on: the database's own, unless a mode needs a connection property. */
    HikariDataSource newPool(int size) {
        return database().newPool(size);
    }

    @BeforeAll
    void createTables() {
        dataSource = newPool(12);
        jdbc = new JdbcTemplate(dataSource);
        transactionManager = new DataSourceTransactionManager(dataSource);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(database().createDataTable(dataTable));
        store = configure(JdbcFenceStore.builder(dataSource).transactionManager(transactionManager)
                .table(fenceTable).createTableIfMissing(true)).build();
        admin = new JdbcFenceAdmin(store);
    }

    /** The store under test's configuration beyond the table: none here; a mode of the store sets its option. */
    JdbcFenceStore.Builder configure(JdbcFenceStore.Builder builder) {
        return builder;
    }

    @AfterAll
    void dropTables() {
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        dataSource.close();
    }

    @Override
    protected FenceStore store() {
        return store;
    }

    /** A second store over the same table, as another instance of the application (or this one restarted) builds. */
    @Override
    protected FenceStore otherStore() {
        return configure(JdbcFenceStore.builder(dataSource).transactionManager(transactionManager)
                .table(fenceTable)).build();
    }

    private void insert(String key, FencingToken token, String value) {
        jdbc.update("INSERT INTO " + dataTable + " (k, token, v) VALUES (?, ?, ?)", key, token.value(), value);
    }

    private List<String> values(String key) {
        return jdbc.queryForList("SELECT v FROM " + dataTable + " WHERE k = ? ORDER BY id", String.class, key);
    }

    @Test
    void dialectIsDetected() {
        assertThat(store.dialect()).isEqualTo(JdbcDialect.valueOf(database().name()));
    }

    @Test
    void maxSeenIsStoredInTheTable() throws Throwable {
        String r = freshResource();
        store.fence(r, token(r, 41, "h"), () -> null);
        assertThat(jdbc.queryForObject("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class, r))
                .isEqualTo(41);
        assertThat(admin.maxSeen(r)).hasValue(41);
    }

    @Test
    void floorRejectsTokensUpToItAndNeverLowers() throws Throwable {
        String r = freshResource();
        admin.raiseFloor(r, 32);
        admin.raiseFloor(r, 10);
        assertThat(admin.maxSeen(r)).hasValue(32);
        assertThatThrownBy(() -> store.fence(r, token(r, 32, "a"), () -> null))
                .isInstanceOfSatisfying(DuplicateTokenException.class,
                        e -> assertThat(e.verdict()).isEqualTo(dev.fencing.rule.Verdict.REJECT_DUPLICATE));
        assertThat(store.fence(r, token(r, 33, "a"), () -> "ok")).isEqualTo("ok");
        admin.raiseFloor(r, 40);
        assertThatThrownBy(() -> store.fence(r, token(r, 33, "a"), () -> null)).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> admin.raiseFloor(r, 0)).hasMessageContaining("positive");
    }

    @Test
    void aFailedWriteRollsBackAndMaxSeenDoesNotAdvance() throws Throwable {
        String r = freshResource();
        store.fence(r, token(r, 10, "a"), () -> {
            insert(r, token(r, 10, "a"), "ten");
            return null;
        });
        FencingToken t11 = token(r, 11, "b");
        assertThatThrownBy(() -> store.fence(r, t11, () -> {
            insert(r, t11, "eleven");
            throw new IllegalStateException("write failed");
        })).hasMessage("write failed");
        assertThat(admin.maxSeen(r)).hasValue(10);
        assertThat(values(r)).containsExactly("ten");
        // since 11 never landed, the 11 holder may retry and it is accepted
        store.fence(r, t11, () -> {
            insert(r, t11, "eleven again");
            return null;
        });
        assertThat(values(r)).containsExactly("ten", "eleven again");
    }

    @Test
    void theCheckJoinsTheCallersTransaction() {
        String r = freshResource();
        TransactionTemplate outer = new TransactionTemplate(transactionManager);
        outer.executeWithoutResult(status -> {
            try {
                store.fence(r, token(r, 5, "a"), () -> {
                    insert(r, token(r, 5, "a"), "five");
                    return null;
                });
            } catch (Throwable e) {
                throw new AssertionError(e);
            }
            status.setRollbackOnly(); // the caller rolls back: the check rolls back with it
        });
        assertThat(admin.maxSeen(r)).isEmpty();
        assertThat(values(r)).isEmpty();
    }

    /**
     * A fenced call in a transaction of another data source's manager: checked in a transaction of its own, the check
     * would commit when the call returns, apart from the writes of the caller's transaction (which could then commit
     * after a newer token's), so the store refuses it before the body and checks nothing.
     */
    @Test
    void aCallInATransactionOfAnotherDataSourceIsRefusedBeforeItsBody() {
        String r = freshResource();
        try (HikariDataSource other = newPool(1)) {
            TransactionTemplate otherTransaction = new TransactionTemplate(new DataSourceTransactionManager(other));
            AtomicBoolean ran = new AtomicBoolean();
            assertThatThrownBy(() -> otherTransaction.executeWithoutResult(status -> fenceMarking(r, 5, ran)))
                    .isInstanceOf(OutsideTransactionException.class).hasMessageContaining("'" + r + "'")
                    .hasMessageContaining("another transaction manager").hasMessageContaining(fenceTable)
                    .hasMessageContaining("The write did not run");
            assertThat(ran).as("the body ran").isFalse();
        }
        assertThat(admin.maxSeen(r)).isEmpty();
        // outside any transaction, and in one of the store's own data source, the same call is checked as ever
        new TransactionTemplate(transactionManager)
                .executeWithoutResult(status -> fenceMarking(r, 5, new AtomicBoolean()));
        assertThat(admin.maxSeen(r)).hasValue(5);
    }

    /**
     * A fenced call whose innermost transaction is another data source's, begun inside a transaction of the store's
     * own (a {@code @Transactional("otherTm")} method called from the primary manager's transaction): the check would
     * join the outer transaction while the method's writes commit with the inner one, so the store, which listens to
     * both managers ({@link TransactionOrigins}), refuses it before the body. The safe nestings are checked as ever:
     * the store's transaction innermost inside the other one's, and a call after the other one's transaction ended.
     */
    @Test
    void aCallWhoseInnermostTransactionIsAnotherDataSourcesInsideOneOfTheStoresIsRefusedBeforeItsBody() {
        String r = freshResource();
        try (HikariDataSource other = newPool(1)) {
            DataSourceTransactionManager otherManager = new DataSourceTransactionManager(other);
            TransactionOrigins.listenTo(otherManager, "'otherTm'");
            TransactionOrigins.listenTo(transactionManager, "'transactionManager'");
            TransactionTemplate storeTransaction = new TransactionTemplate(transactionManager);
            TransactionTemplate otherTransaction = new TransactionTemplate(otherManager);
            AtomicBoolean ran = new AtomicBoolean();
            assertThatThrownBy(() -> storeTransaction.executeWithoutResult(outer -> otherTransaction
                    .executeWithoutResult(inner -> fenceMarking(r, 5, ran))))
                    .isInstanceOf(OutsideTransactionException.class).hasMessageContaining("'" + r + "'")
                    .hasMessageContaining("innermost transaction")
                    .hasMessageContaining("'otherTm' (DataSourceTransactionManager)")
                    .hasMessageContaining(fenceTable).hasMessageContaining("The write did not run");
            assertThat(ran).as("the body ran").isFalse();
            assertThat(admin.maxSeen(r)).isEmpty();

            otherTransaction.executeWithoutResult(outer -> storeTransaction
                    .executeWithoutResult(inner -> fenceMarking(r, 5, ran)));
            assertThat(ran).isTrue();
            assertThat(admin.maxSeen(r)).hasValue(5);

            storeTransaction.executeWithoutResult(outer -> {
                otherTransaction.executeWithoutResult(inner -> { });
                fenceMarking(r, 6, ran);
            });
            assertThat(admin.maxSeen(r)).hasValue(6);

            // the store's transaction suspended (NOT_SUPPORTED) inside the other one's: no transaction is active,
            // but the other manager's still holds its connection, and the method's writes would commit with it
            TransactionTemplate suspended = new TransactionTemplate(transactionManager);
            suspended.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
            ran.set(false);
            assertThatThrownBy(() -> storeTransaction.executeWithoutResult(outer -> otherTransaction
                    .executeWithoutResult(inner -> suspended.executeWithoutResult(none -> fenceMarking(r, 7, ran)))))
                    .isInstanceOf(OutsideTransactionException.class)
                    .hasMessageContaining("'otherTm' (DataSourceTransactionManager)");
            assertThat(ran).as("the body ran").isFalse();
            assertThat(admin.maxSeen(r)).hasValue(6);

            // a savepoint of the store's manager (NESTED) between is no transaction of its own: still refused
            TransactionTemplate savepoint = new TransactionTemplate(transactionManager);
            savepoint.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
            assertThatThrownBy(() -> storeTransaction.executeWithoutResult(outer -> otherTransaction
                    .executeWithoutResult(inner -> savepoint.executeWithoutResult(nested -> fenceMarking(r, 7, ran)))))
                    .isInstanceOf(OutsideTransactionException.class)
                    .hasMessageContaining("'otherTm' (DataSourceTransactionManager)");
            assertThat(ran).as("the body ran").isFalse();
            assertThat(admin.maxSeen(r)).hasValue(6);
        }
    }

    /**
     * A fenced call in a read-only transaction of the store's data source is refused before its body: the check
     * advances max_seen, a write the transaction cannot make (also for a fenced read), and a retry would not help.
     */
    @Test
    void aCallInAReadOnlyTransactionIsRefusedBeforeItsBody() {
        String r = freshResource();
        TransactionTemplate readOnly = new TransactionTemplate(transactionManager);
        readOnly.setReadOnly(true);
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> readOnly.executeWithoutResult(status -> fenceMarking(r, 5, ran)))
                .isInstanceOf(OutsideTransactionException.class).hasMessageContaining("'" + r + "'")
                .hasMessageContaining("read-only transaction").hasMessageContaining(fenceTable)
                .hasMessageContaining("The call did not run");
        assertThat(ran).as("the body ran").isFalse();
        assertThat(admin.maxSeen(r)).isEmpty();
    }

    private void fenceMarking(String r, long value, AtomicBoolean ran) {
        try {
            store.fence(r, token(r, value, "a"), () -> {
                ran.set(true);
                return null;
            });
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRejectionLeavesTheTableUnchanged() throws Throwable {
        String r = freshResource();
        store.fence(r, token(r, 20, "a"), () -> null);
        Object before = jdbc.queryForMap("SELECT max_seen, holder, updated_at FROM " + fenceTable
                + " WHERE resource = ?", r);
        assertThatThrownBy(() -> store.fence(r, token(r, 19, "z"), () -> null)).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> store.fence(r, token(r, 20, "z"), () -> null))
                .isInstanceOf(DuplicateTokenException.class);
        assertThat(jdbc.queryForMap("SELECT max_seen, holder, updated_at FROM " + fenceTable
                + " WHERE resource = ?", r))
                .isEqualTo(before);
    }

    @Test
    void maxSeenSurvivesARestart() throws Throwable {
        String r = freshResource();
        store.fence(r, token(r, 34, "b"), () -> null);
        try (HikariDataSource fresh = database().newPool(2)) {
            JdbcFenceStore restarted = JdbcFenceStore.builder(fresh).table(fenceTable).build();
            assertThat(new JdbcFenceAdmin(restarted).maxSeen(r)).hasValue(34);
            assertThatThrownBy(() -> restarted.fence(r, token(r, 33, "a"), () -> null))
                    .isInstanceOf(StaleTokenException.class);
        }
    }

    @Test
    void committedOrderIsTokenOrderUnderConcurrency() throws Exception {
        String r = freshResource();
        int threads = 6;
        int perThread = 25;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t;
            futures.add(pool.submit(() -> {
                start.await();
                int accepted = 0;
                for (int i = 0; i < perThread; i++) {
                    FencingToken tok = token(r, 1 + (long) i * threads + offset, "h" + offset + "-" + i);
                    try {
                        store.fence(r, tok, () -> {
                            insert(r, tok, "v");
                            return null;
                        });
                        accepted++;
                    } catch (TokenRejectedException rejected) {
                        // expected for tokens overtaken by a newer one
                    } catch (Throwable e) {
                        throw new AssertionError(e);
                    }
                }
                return accepted;
            }));
        }
        start.countDown();
        int accepted = 0;
        for (Future<Integer> f : futures) {
            accepted += f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        List<Long> applied = jdbc.queryForList("SELECT token FROM " + dataTable + " WHERE k = ? ORDER BY id",
                Long.class, r);
        assertThat(applied).hasSize(accepted).isSorted().doesNotHaveDuplicates();
        assertThat(applied.get(applied.size() - 1)).isEqualTo((long) threads * perThread);
        assertThat(admin.maxSeen(r)).hasValue((long) threads * perThread);
    }

    /**
     * Whether a check may end in {@link FenceConflictException} (the database aborted it as a deadlock) when its
     * resource's first checks run concurrently: MariaDB in REPEATABLE READ, for a resource with a family, whose
     * floor read takes a shared gap lock (see stores.md). Fail closed either way: never two accepted.
     */
    boolean concurrentFirstChecksMayConflict() {
        return false;
    }

    @Test
    void concurrentFirstChecksOfANewResourceAllReachAVerdict() throws Exception {
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 20; round++) {
                String r = freshResource();
                java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threads);
                List<Future<Long>> verdicts = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    FencingToken tok = token(r, t + 1, "h" + t);
                    verdicts.add(pool.submit(() -> {
                        barrier.await();
                        try {
                            store.fence(r, tok, () -> null);
                            return tok.value();
                        } catch (TokenRejectedException rejected) {
                            return 0L;
                        } catch (FenceConflictException conflict) {
                            if (concurrentFirstChecksMayConflict()) {
                                return -1L;
                            }
                            throw new AssertionError("no verdict for " + tok, conflict);
                        } catch (Throwable e) {
                            throw new AssertionError("no verdict for " + tok, e);
                        }
                    }));
                }
                long highestAccepted = 0;
                int accepted = 0;
                for (Future<Long> verdict : verdicts) {
                    long value = verdict.get(60, TimeUnit.SECONDS);
                    accepted += value > 0 ? 1 : 0;
                    highestAccepted = Math.max(highestAccepted, value);
                }
                assertThat(accepted).isBetween(1, threads);
                assertThat(admin.maxSeen(r)).hasValue(highestAccepted);
                if (!concurrentFirstChecksMayConflict()) {
                    assertThat(highestAccepted).isEqualTo(threads);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void unknownTableFailsAtStartupSayingWhatToDo() {
        assertThatThrownBy(() -> JdbcFenceStore.builder(dataSource).table(Database.uniqueTable("missing")).build()
                .verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("missing or unusable")
                .hasMessageContaining("dev/fencing/jdbc/schema-")
                .hasMessageContaining("createTableIfMissing(true)");
    }

    @Test
    void wrongDialectFailsAtStartup() {
        JdbcDialect wrong = database() == Database.H2 ? JdbcDialect.POSTGRESQL : JdbcDialect.H2;
        assertThatThrownBy(() -> JdbcFenceStore.builder(dataSource).dialect(wrong).table(fenceTable).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("dialect " + wrong + " does not match")
                .hasMessageContaining("set dialect(" + database().name() + ")");
    }

    @Test
    void tableWithoutAPrimaryKeyOnResourceFailsAtStartup() {
        String bad = Database.uniqueTable("nokey");
        String timestampType = database() == Database.MARIADB ? "TIMESTAMP(6)" : "TIMESTAMP WITH TIME ZONE";
        jdbc.execute("CREATE TABLE " + bad + " (resource VARCHAR(256) NOT NULL, max_seen BIGINT NOT NULL, "
                + "holder VARCHAR(256), updated_at " + timestampType + " NOT NULL)");
        try {
            assertThatThrownBy(() -> JdbcFenceStore.builder(dataSource).table(bad).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining(bad);
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + bad, Long.class)).isZero();
        } finally {
            jdbc.execute("DROP TABLE " + bad);
        }
    }

    @Test
    void invalidTableNameIsRefusedBeforeAnySql() {
        for (String name : new String[] {"fence; DROP TABLE x", "1abc", "a.b.c", "", "t-1", "x".repeat(64)}) {
            assertThatThrownBy(() -> JdbcFenceStore.builder(dataSource).table(name).build())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("table name '" + name + "' is invalid");
        }
    }

    /**
     * The README's promise for a store built without {@code transactionManager(..)}: the check joins whatever
     * transaction holds a connection of the DataSource, JpaTransactionManager's included. Such a transaction binds
     * its connection to the DataSource for JDBC code without marking it as a DataSourceTransactionManager
     * transaction; the check and the write must still run in it and roll back with it.
     */
    @Test
    void withTheDefaultTransactionManagerTheCheckJoinsAJpaStyleTransactionAndRollsBackWithIt() throws Throwable {
        JdbcFenceStore defaultStore = JdbcFenceStore.builder(dataSource).table(fenceTable)
                .createTableIfMissing(true).build();
        defaultStore.verify();
        String resource = "jpa-style-" + System.nanoTime();
        FencingToken token = new FencingToken(resource, 5, "h");
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            TransactionSynchronizationManager.initSynchronization();
            TransactionSynchronizationManager.setActualTransactionActive(true);
            TransactionSynchronizationManager.bindResource(dataSource,
                    new ConnectionHolder(connection));
            try {
                defaultStore.fence(resource, token, () -> {
                    insert(resource, token, "written");
                    return null;
                });
            } finally {
                TransactionSynchronizationManager.unbindResource(dataSource);
                TransactionSynchronizationManager.clear();
            }
            assertThat(connection.getAutoCommit()).isFalse();
            connection.rollback();
        }
        assertThat(values(resource)).as("the write rolled back with the caller's transaction").isEmpty();
        assertThat(jdbc.queryForList("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?", Long.class,
                resource)).as("max_seen rolled back with it").isEmpty();
    }
}
