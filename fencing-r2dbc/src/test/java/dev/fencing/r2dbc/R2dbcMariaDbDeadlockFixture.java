package dev.fencing.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * What the R2DBC store's MariaDB deadlock tests share: a pool of six on the local MariaDB, a fence table and the
 * store on it, a data table the fenced bodies write to, a two-row lock table whose rows the choreographies take in
 * opposite orders, and a heavy table that keeps the other transaction from being the deadlock's victim; all
 * dropped after the class. Each test class extends it with a table prefix of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class R2dbcMariaDbDeadlockFixture {

    static final Duration STEP = Duration.ofSeconds(60);
    final String fence;
    final String data;
    final String locks;
    final String heavy;
    ConnectionPool pool;
    DatabaseClient db;
    TransactionalOperator transactions;
    R2dbcFenceStore store;

    R2dbcMariaDbDeadlockFixture(String prefix) {
        fence = R2dbcFenceStoreContract.uniqueTable(prefix + "_fence");
        data = R2dbcFenceStoreContract.uniqueTable(prefix + "_data");
        locks = R2dbcFenceStoreContract.uniqueTable(prefix + "_locks");
        heavy = R2dbcFenceStoreContract.uniqueTable(prefix + "_heavy");
    }

    @BeforeAll
    void setUp() {
        pool = (ConnectionPool) ConnectionFactories.get("r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=6");
        db = DatabaseClient.create(pool);
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(pool));
        run(R2dbcDialect.MARIADB.sql().createTableSql(fence));
        run("CREATE TABLE " + data + " (id INT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(64), token BIGINT, "
                + "v VARCHAR(64)) ENGINE=InnoDB");
        run("CREATE TABLE " + locks + " (id INT PRIMARY KEY, n INT) ENGINE=InnoDB");
        run("INSERT INTO " + locks + " VALUES (1, 0), (2, 0)");
        run("CREATE TABLE " + heavy + " (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB");
        store = R2dbcFenceStore.builder(pool).table(fence).build();
        store.verify();
    }

    @AfterAll
    void tearDown() {
        try {
            for (String table : List.of(fence, data, locks, heavy)) {
                run("DROP TABLE IF EXISTS " + table);
            }
        } finally {
            pool.dispose();
        }
    }

    void run(String sql) {
        db.sql(sql).then().block(STEP);
    }

    /** A row of the data table written under {@code t}. */
    Mono<Void> insert(String r, FencingToken t) {
        return db.sql("INSERT INTO " + data + " (k, token, v) VALUES (?, ?, ?)")
                .bind(0, r).bind(1, t.value()).bind(2, t.holder()).then();
    }

    /** Blocks on {@code latch} off the event loop, as the tests' choreographies need. */
    static Mono<Void> await(CountDownLatch latch, long sleepAfter) {
        return Mono.<Void>fromRunnable(() -> {
            try {
                assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
                Thread.sleep(sleepAfter);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /** "ok", or the failure's class and message. */
    String outcome(Flux<?> transaction) {
        try {
            transaction.blockLast(STEP);
            return "ok";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }
}
