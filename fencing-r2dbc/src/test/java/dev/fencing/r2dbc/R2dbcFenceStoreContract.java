package dev.fencing.r2dbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.testsupport.ReactiveFenceStoreContract;
import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The reactive store contract on a real database, each call in a {@link TransactionalOperator} transaction, plus
 * what only a database store must do: roll back with the write, refuse without a transaction, keep a zombie out,
 * bound its lock wait, and refuse a bad table at startup.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class R2dbcFenceStoreContract extends ReactiveFenceStoreContract {

    protected ConnectionPool pool;
    protected DatabaseClient db;
    protected TransactionalOperator transactions;
    protected String fenceTable;
    protected R2dbcFenceStore store;
    /** A second store over the same table, as another process (or this one restarted) builds it. */
    protected R2dbcFenceStore otherStore;

    /** An R2DBC URL of the test database, without pool options. */
    abstract String url();

    abstract R2dbcDialect dialect();

    /** A {@code CREATE TABLE} for a fence table whose {@code max_seen} is an {@code INTEGER}. */
    abstract String createIntegerMaxSeenTable(String table);

    static String uniqueTable(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    @BeforeAll
    void createTable() {
        pool = (ConnectionPool) ConnectionFactories.get(url().replaceFirst("^r2dbc:", "r2dbc:pool:")
                + "?maxSize=12&initialSize=2");
        db = DatabaseClient.create(pool);
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(pool));
        fenceTable = uniqueTable("r2fence");
        // the shipped script's statement with the table name replaced, as the docs tell users
        db.sql(dialect().sql().createTableSql(fenceTable)).then().block(Duration.ofSeconds(30));
        store = R2dbcFenceStore.builder(pool).table(fenceTable).build();
        store.verify();
        otherStore = R2dbcFenceStore.builder(pool).table(fenceTable).build();
    }

    @AfterAll
    void dropTable() {
        try {
            db.sql("DROP TABLE IF EXISTS " + fenceTable).then().block(Duration.ofSeconds(30));
        } finally {
            pool.dispose();
        }
    }

    @Override
    protected ReactiveFenceStore store() {
        return store;
    }

    @Override
    protected ReactiveFenceStore otherStore() {
        return otherStore;
    }

    @Override
    protected <T> Flux<T> inUnitOfWork(Flux<T> work) {
        return transactions.transactional(work);
    }

    /** The committed row of a resource: max_seen, holder, updated_at; empty when there is none. */
    private Map<String, Object> committedRow(String resource) {
        return db.sql(dialect().nativeMarkers("SELECT max_seen, holder, updated_at FROM " + fenceTable
                        + " WHERE resource = ?")).bind(0, resource)
                .map((row, meta) -> Map.<String, Object>of("max_seen", row.get(0, Long.class),
                        "holder", row.get(1, String.class), "updated_at", String.valueOf(row.get(2))))
                .one().defaultIfEmpty(Map.of()).block(Duration.ofSeconds(30));
    }

    /**
     * A resource without a row is judged against its family's floor row (written by the JDBC store's compaction, the
     * same table and SQL): below it stale, equal duplicate, above it accepted with a row of its own.
     */
    @Test
    void aResourceWithoutARowIsJudgedAgainstItsFamilyFloor() {
        String family = "fam" + UUID.randomUUID().toString().substring(0, 8);
        db.sql(dialect().nativeMarkers("INSERT INTO " + fenceTable + " (resource, max_seen, holder, updated_at) "
                        + "VALUES (?, 50, NULL, CURRENT_TIMESTAMP)"))
                .bind(0, dev.fencing.store.sql.FenceSql.familyFloorKey(family)).then().block(STEP);
        String r = family + ":7";
        List<String> log = new ArrayList<>();
        StepVerifier.create(write(r, token(r, 49, "a"), log, "49")).expectError(StaleTokenException.class)
                .verify(STEP);
        StepVerifier.create(write(r, token(r, 50, "a"), log, "50"))
                .expectError(dev.fencing.rule.DuplicateTokenException.class).verify(STEP);
        accepted(r, token(r, 51, "a"), log, "51");
        assertThat(log).containsExactly("51");
        assertThat(committedRow(r)).containsEntry("max_seen", 51L).containsEntry("holder", "a");
    }

    @Test
    void dialectIsDetectedFromTheConnectionFactory() {
        assertThat(store.dialect()).isEqualTo(dialect());
    }

    @Test
    void rollbackTakesMaxSeenBack() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 5, "a"), log, "5");
        IllegalStateException boom = new IllegalStateException("boom");
        Flux<String> failing = inUnitOfWork(store.fence(r, token(r, 7, "b"),
                Flux.defer(() -> {
                    log.add("7 failing");
                    return Flux.error(boom);
                })));
        StepVerifier.create(failing).expectErrorSatisfies(e -> assertThat(e).isSameAs(boom)).verify(STEP);
        assertThat(committedRow(r)).containsEntry("max_seen", 5L).containsEntry("holder", "a");
        // 7 was never committed: another holder's 7 is a first 7, not a duplicate
        accepted(r, token(r, 7, "c"), log, "7 from c");
        assertThat(committedRow(r)).containsEntry("max_seen", 7L).containsEntry("holder", "c");
        assertThat(log).containsExactly("5", "7 failing", "7 from c");
    }

    /** The listing the startup checks read: the highest max_seen and pages of resources, empty for an empty table. */
    @Test
    void theInventoryListsTheTableAndItsHighestMaxSeen() {
        String table = uniqueTable("r2inv");
        db.sql(dialect().sql().createTableSql(table)).then().block(Duration.ofSeconds(30));
        try {
            R2dbcFenceStore own = R2dbcFenceStore.builder(pool).table(table).build();
            R2dbcFenceInventory inventory = own.inventory();
            assertThat(inventory.highestMaxSeen()).isEmpty();
            assertThat(inventory.resources(null, 10)).isEmpty();
            List<String> log = new ArrayList<>();
            for (String[] write : new String[][] {{"inv:b", "41"}, {"inv:a", "7"}, {"inv:c", "19"}}) {
                StepVerifier.create(transactions.transactional(own.fence(write[0],
                                token(write[0], Long.parseLong(write[1]), "h"), Flux.defer(() -> {
                                    log.add(write[0]);
                                    return Flux.just(write[0]);
                                }))))
                        .expectNext(write[0]).verifyComplete();
            }
            assertThat(inventory.highestMaxSeen()).hasValue(41);
            assertThat(inventory.resources(null, 2)).containsExactly("inv:a", "inv:b");
            assertThat(inventory.resources("inv:b", 2)).containsExactly("inv:c");
            assertThatThrownBy(() -> inventory.resources(null, 0)).isInstanceOf(IllegalArgumentException.class);
            // one resource's, which the startup counter check compares (it skipped an R2DBC-only application)
            assertThat(inventory.maxSeen("inv:c")).hasValue(19);
            assertThat(inventory.maxSeen("inv:none")).isEmpty();
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(Duration.ofSeconds(30));
        }
    }

    @Test
    void aZombieIsRefusedAndTheRowIsUntouched() {
        String r = freshResource();
        List<String> log = new ArrayList<>();
        accepted(r, token(r, 34, "b"), log, "34");   // its own transaction, committed
        Map<String, Object> before = committedRow(r);
        FencingToken zombie = token(r, 33, "a");
        StepVerifier.create(write(r, zombie, log, "33"))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.presented()).isSameAs(zombie);
                    assertThat(s.maxSeen()).isEqualTo(34);
                }))
                .verify(STEP);
        assertThat(committedRow(r)).isEqualTo(before).containsEntry("max_seen", 34L);
        assertThat(log).containsExactly("34");
    }

    @Test
    void withoutATransactionTheCheckIsRefusedAndNothingRuns() {
        String r = freshResource();
        FencingToken t = token(r, 1, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        StepVerifier.create(store.fence(r, t, Flux.just("w").doOnSubscribe(s -> subscribed.set(true))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(OutsideTransactionException.class,
                        f -> {
                            assertThat(f.presented()).isSameAs(t);
                            assertThat(f).hasMessageContaining(r).hasMessageContaining("no reactive transaction")
                                    .hasMessageContaining("R2dbcTransactionManager");
                        }))
                .verify(STEP);
        assertThat(subscribed).isFalse();
        assertThat(committedRow(r)).isEmpty();
    }

    @Test
    void aTransactionOfAnotherConnectionFactoryDoesNotCount() {
        String r = freshResource();
        ConnectionFactory other = ConnectionFactories.get(url());
        TransactionalOperator otherTransactions = TransactionalOperator.create(new R2dbcTransactionManager(other));
        StepVerifier.create(otherTransactions.transactional(store.fence(r, token(r, 1, "a"), Flux.just("w"))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(OutsideTransactionException.class)
                        .hasMessageContaining("no reactive transaction")
                        .hasMessageContaining("The transaction active is on another ConnectionFactory"))
                .verify(STEP);
        assertThat(committedRow(r)).isEmpty();
    }

    /** Transactions of another connection factory on the same database (another manager, as a second DataSource). */
    private TransactionalOperator otherTransactions() {
        return TransactionalOperator.create(new R2dbcTransactionManager(ConnectionFactories.get(url())));
    }

    /** Transactions of the store's connection factory with {@code definition}. */
    private TransactionalOperator storeTransactions(DefaultTransactionDefinition definition) {
        return TransactionalOperator.create(new R2dbcTransactionManager(pool), definition);
    }

    /**
     * Subscribes {@code call} and checks that it is refused as outside the store's transaction, naming {@code said}.
     */
    private void refusedOutside(Flux<String> call, String r, FencingToken t, String said) {
        StepVerifier.create(call)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(OutsideTransactionException.class,
                        f -> {
                            assertThat(f.presented()).isSameAs(t);
                            assertThat(f).hasMessageContaining(r).hasMessageContaining(said);
                        }))
                .verify(STEP);
        assertThat(committedRow(r)).isEmpty();
    }

    @Test
    void anotherManagersTransactionInsideTheStoresIsRefusedBeforeTheWrite() {
        // the check would run in the outer transaction while the method's writes commit with the inner one
        String r = freshResource();
        FencingToken t = token(r, 1, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<String> call = store.fence(r, t, Flux.just("w").doOnSubscribe(s -> subscribed.set(true)));
        refusedOutside(transactions.transactional(otherTransactions().transactional(call)), r, t,
                "another transaction manager's transaction is active in the caller's reactive transaction context "
                        + "beside the store's, on another ConnectionFactory ("
                        + ConnectionFactories.get(url()).getMetadata().getName() + ", ");
        assertThat(subscribed).isFalse();
        // a transaction of the store's joined in between changes nothing: the writes still go with the other one
        FencingToken u = token(r, 2, "a");
        refusedOutside(transactions.transactional(otherTransactions().transactional(transactions.transactional(
                store.fence(r, u, Flux.just("w").doOnSubscribe(s -> subscribed.set(true)))))), r, u,
                "beside the store's");
        // nor does a savepoint of the store's (NESTED): it binds no connection of its own
        FencingToken v = token(r, 3, "a");
        refusedOutside(transactions.transactional(otherTransactions().transactional(storeTransactions(
                new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NESTED)).transactional(
                store.fence(r, v, Flux.just("w").doOnSubscribe(s -> subscribed.set(true)))))), r, v,
                "beside the store's");
        assertThat(subscribed).isFalse();
    }

    @Test
    void anotherManagersTransactionInsideTheStoresIsRefusedAlsoAfterANewTransactionOfTheStoresEnded() {
        // a new transaction of the store's (REQUIRES_NEW) that ends inside the other one binds the store's outer
        // connection to the context again, last: the order of the context's resources no longer tells which
        // transaction is the innermost one, and the check would run in the outer one while the write commits with
        // the other manager's
        String r = freshResource();
        FencingToken t = token(r, 1, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        DefaultTransactionDefinition requiresNew = new DefaultTransactionDefinition(
                TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        Flux<String> call = storeTransactions(requiresNew).transactional(db.sql("SELECT 1").then())
                .thenMany(store.fence(r, t, Flux.just("w").doOnSubscribe(s -> subscribed.set(true))));
        refusedOutside(transactions.transactional(otherTransactions().transactional(call)), r, t,
                "another transaction manager's transaction");
        assertThat(subscribed).isFalse();
    }

    @Test
    void theStoresTransactionInsideAnotherManagersIsRefusedToo() {
        // the context shows the same as after a REQUIRES_NEW of the store's ended inside the other transaction (the
        // store's connection bound last), so the store cannot tell this nesting from that one: it refuses both
        String r = freshResource();
        AtomicBoolean subscribed = new AtomicBoolean();
        FencingToken t = token(r, 1, "a");
        refusedOutside(otherTransactions().transactional(transactions.transactional(
                store.fence(r, t, Flux.just("in").doOnSubscribe(s -> subscribed.set(true))))), r, t,
                "beside the store's");
        // and a new transaction of the store's inside the other one, inside one of the store's
        FencingToken u = token(r, 2, "a");
        DefaultTransactionDefinition requiresNew = new DefaultTransactionDefinition(
                TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        refusedOutside(transactions.transactional(otherTransactions().transactional(storeTransactions(requiresNew)
                .transactional(store.fence(r, u, Flux.just("new").doOnSubscribe(s -> subscribed.set(true)))))), r, u,
                "beside the store's");
        assertThat(subscribed).isFalse();
        // once the other transaction has ended, the store's alone is checked as usual
        StepVerifier.create(transactions.transactional(otherTransactions().transactional(db.sql("SELECT 1").then())
                        .thenMany(store.fence(r, token(r, 3, "a"), Flux.just("after")))))
                .expectNext("after").expectComplete().verify(STEP);
        assertThat(committedRow(r)).containsEntry("max_seen", 3L);
    }

    @Test
    void aSavepointOfTheStoresAndAThirdFactoryInAutoCommitAreAccepted() {
        String r = freshResource();
        // a savepoint of the store's inside its own transaction
        StepVerifier.create(transactions.transactional(storeTransactions(new DefaultTransactionDefinition(
                        TransactionDefinition.PROPAGATION_NESTED)).transactional(
                        store.fence(r, token(r, 1, "a"), Flux.just("savepoint")))))
                .expectNext("savepoint").expectComplete().verify(STEP);
        assertThat(committedRow(r)).containsEntry("max_seen", 1L);
        // a third connection factory used without a transaction of its own (auto-commit) inside the store's
        DatabaseClient third = DatabaseClient.create(ConnectionFactories.get(url()));
        StepVerifier.create(transactions.transactional(third.sql("SELECT 1").then()
                        .thenMany(store.fence(r, token(r, 2, "a"), Flux.just("third")))))
                .expectNext("third").expectComplete().verify(STEP);
        assertThat(committedRow(r)).containsEntry("max_seen", 2L);
    }

    @Test
    void theStoresConnectionFactoryUsedWithoutItsTransactionIsRefused() {
        // inside another manager's transaction, a statement on the store's connection factory binds an auto-commit
        // connection to it: a check there would commit at once, apart from the write
        String r = freshResource();
        FencingToken t = token(r, 1, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<String> call = db.sql("SELECT 1").then()
                .thenMany(store.fence(r, t, Flux.just("w").doOnSubscribe(s -> subscribed.set(true))));
        refusedOutside(otherTransactions().transactional(call), r, t, "auto-commit");
        assertThat(subscribed).isFalse();
    }

    @Test
    void aReadOnlyTransactionIsRefusedBeforeTheWrite() {
        String r = freshResource();
        FencingToken t = token(r, 1, "a");
        AtomicBoolean subscribed = new AtomicBoolean();
        DefaultTransactionDefinition readOnly = new DefaultTransactionDefinition();
        readOnly.setReadOnly(true);
        refusedOutside(storeTransactions(readOnly).transactional(
                store.fence(r, t, Flux.just("w").doOnSubscribe(s -> subscribed.set(true)))), r, t, "read-only");
        assertThat(subscribed).isFalse();
    }

    /**
     * A bound the database cannot take (PostgreSQL's lock_timeout is an int of milliseconds; a Duration past a long of
     * them has no millisecond value at all) is refused when built, naming it; the largest one works.
     */
    @Test
    void aLockTimeoutTheDatabaseCannotTakeIsRefusedWhenBuilt() {
        for (Duration tooLong : List.of(Duration.ofMillis(Integer.MAX_VALUE + 1L), Duration.ofDays(30),
                Duration.ofSeconds(Long.MAX_VALUE))) {
            assertThat(catchThrowable(() -> R2dbcFenceStore.builder(pool).table(fenceTable).lockTimeout(tooLong)))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("lockTimeout").hasMessageContaining(tooLong.toString())
                    .hasMessageContaining(Integer.MAX_VALUE + " ms");
        }
        R2dbcFenceStore longest = R2dbcFenceStore.builder(pool).table(fenceTable)
                .lockTimeout(R2dbcFenceStore.MAX_LOCK_TIMEOUT).build();
        String r = freshResource();
        StepVerifier.create(inUnitOfWork(longest.fence(r, token(r, 5, "a"), Flux.just("written"))))
                .expectNext("written").verifyComplete();
    }

    @Test
    void aCheckWaitsAtMostTheLockTimeoutForARowAnotherTransactionHolds() throws Exception {
        String r = freshResource();
        R2dbcFenceStore impatient = R2dbcFenceStore.builder(pool).table(fenceTable)
                .lockTimeout(Duration.ofMillis(300)).build();
        Sinks.Empty<Void> release = Sinks.empty();
        CountDownLatch holding = new CountDownLatch(1);
        // the first transaction checks 10 and stays inside its write, holding the fence row
        var first = inUnitOfWork(store.fence(r, token(r, 10, "a"),
                release.asMono().doOnSubscribe(s -> holding.countDown()).thenMany(Flux.just("10"))))
                .collectList().toFuture();
        assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
        FencingToken second = token(r, 11, "b");
        StepVerifier.create(inUnitOfWork(impatient.fence(r, second, Flux.just("11"))))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(R2dbcFenceTransientException.class,
                        busy -> {
                            assertThat(busy.reason()).isEqualTo(TransientFenceFailure.Reason.BUSY);
                            assertThat(busy.presented()).isSameAs(second);
                            assertThat(busy).hasMessageContaining(r).hasMessageContaining("300 ms");
                        }))
                .verify(STEP);
        release.tryEmitEmpty();
        assertThat(first.get(30, TimeUnit.SECONDS)).containsExactly("10");
        assertThat(committedRow(r)).containsEntry("max_seen", 10L).containsEntry("holder", "a");
        // the caller's own lock wait bound is back after the check (PostgreSQL sets it per transaction)
        accepted(r, token(r, 12, "b"), new ArrayList<>(), "12");
    }

    @Test
    void theFenceRunsOnAParallelScheduler() {
        String r = freshResource();
        List<String> threads = new ArrayList<>();
        Flux<String> onParallel = inUnitOfWork(store.fence(r, token(r, 1, "a"),
                Flux.defer(() -> {
                    threads.add(Thread.currentThread().getName());
                    return Flux.just("done");
                }))).subscribeOn(Schedulers.parallel());
        StepVerifier.create(onParallel).expectNext("done").expectComplete().verify(STEP);
        assertThat(threads).hasSize(1);
        assertThat(committedRow(r)).containsEntry("max_seen", 1L);
    }

    @Test
    void verifyRefusesAMissingTable() {
        String missing = uniqueTable("missing");
        assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(missing).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'" + missing + "'")
                .hasMessageContaining("does not exist")
                .hasMessageContaining(dialect().script());
    }

    /**
     * A table that loses max_seen (PostgreSQL's UNLOGGED, emptied by crash recovery) or checks outside the write's
     * transaction (a MariaDB engine other than InnoDB) is refused, naming the fix; a new user's trial had an UNLOGGED
     * table verified.
     */
    @Test
    void verifyRefusesATableThatDoesNotKeepMaxSeen() {
        String table = uniqueTable("fragile");
        db.sql(dialect().sql().createTableSql(table)).then().block(Duration.ofSeconds(30));
        try {
            db.sql(weakenTable(table)).then().block(Duration.ofSeconds(30));
            assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Fence table '" + table + "' " + weakenedSays())
                    .hasMessageContaining("Fix it with: ALTER TABLE " + table);
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(Duration.ofSeconds(30));
        }
    }

    /** A statement that leaves {@code table} without durable, transactional rows. */
    abstract String weakenTable(String table);

    /** What the refusal of a table {@link #weakenTable} changed says. */
    abstract String weakenedSays();

    @Test
    void verifyRefusesAnIntegerMaxSeen() {
        String table = uniqueTable("narrow");
        db.sql(createIntegerMaxSeenTable(table)).then().block(Duration.ofSeconds(30));
        try {
            assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("'" + table + "' column 'max_seen'")
                    .hasMessageContaining("BIGINT")
                    .hasMessageContaining(dialect().script());
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(Duration.ofSeconds(30));
        }
    }

    @Test
    void verifyRefusesATableWithoutAKeyOnResource() {
        String table = uniqueTable("nokey");
        String script = dialect().sql().createTableSql(table);
        assertThat(script).contains(" PRIMARY KEY");
        db.sql(script.replace(" PRIMARY KEY", "")).then().block(Duration.ofSeconds(30));
        try {
            assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table(table).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("'" + table + "'")
                    .hasMessageContaining(dialect().script());
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(Duration.ofSeconds(30));
        }
    }

    @Test
    void anInvalidTableNameIsRefusedAtBuild() {
        assertThatThrownBy(() -> R2dbcFenceStore.builder(pool).table("fence; DROP TABLE x").build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("fence; DROP TABLE x");
    }

    @Test
    void aTableThatChecksOutIsLoggedOnceAtInfoAsTheJdbcStoreDoes() {
        Logger logger = Logger.getLogger(R2dbcFenceStore.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord logRecord) {
                records.add(logRecord);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            R2dbcFenceStore fresh = R2dbcFenceStore.builder(pool).table(fenceTable).build();
            fresh.verify();
            fresh.verify();
        } finally {
            logger.removeHandler(handler);
        }
        assertThat(records).filteredOn(r -> r.getLevel() == Level.INFO).extracting(LogRecord::getMessage)
                .containsExactly("R2dbcFenceStore: table '" + fenceTable + "' on " + dialect().productName()
                        + " verified");
    }
}
