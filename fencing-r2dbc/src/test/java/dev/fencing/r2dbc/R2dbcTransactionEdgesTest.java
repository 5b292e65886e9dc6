package dev.fencing.r2dbc;

import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A red team's probes of the R2DBC store on PostgreSQL and MariaDB, kept as regression tests: many fenced calls in one
 * transaction (the JDBC store once failed on its driver's parameter limit past about 9,000 checks; MariaDB runs each
 * check again before the commit), the transaction's connection killed between the check and the commit, a
 * {@code NOT_SUPPORTED} scope around a fenced call, and first checks of one transaction on two threads at once.
 */
@Timeout(180)
class R2dbcTransactionEdgesTest {

    static final Duration STEP = Duration.ofSeconds(120);

    private record Db(ConnectionPool pool, DatabaseClient db, TransactionalOperator tx, R2dbcFenceStore store,
                      String fence, String data, boolean pg) implements AutoCloseable {
        static Db open(String which) {
            boolean pg = which.equals("pg");
            ConnectionPool pool = (ConnectionPool) ConnectionFactories.get(pg
                    ? "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=4"
                    : "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=4");
            DatabaseClient db = DatabaseClient.create(pool);
            String fence = R2dbcFenceStoreContract.uniqueTable("r2rtp_fence");
            String data = R2dbcFenceStoreContract.uniqueTable("r2rtp_data");
            R2dbcDialect dialect = pg ? R2dbcDialect.POSTGRESQL : R2dbcDialect.MARIADB;
            db.sql(dialect.sql().createTableSql(fence)).then().block(STEP);
            db.sql("CREATE TABLE " + data + " (k VARCHAR(64), token BIGINT)" + (pg ? "" : " ENGINE=InnoDB"))
                    .then().block(STEP);
            R2dbcFenceStore store = R2dbcFenceStore.builder(pool).table(fence).build();
            return new Db(pool, db, TransactionalOperator.create(new R2dbcTransactionManager(pool)), store, fence,
                    data, pg);
        }

        Mono<Void> insert(String r, FencingToken t) {
            return db.sql("INSERT INTO " + data + " (k, token) VALUES ('" + r + "', " + t.value() + ")").then();
        }

        List<Long> written(String r) {
            return db.sql("SELECT token FROM " + data + " WHERE k = '" + r + "' ORDER BY token")
                    .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
        }

        Long maxSeen(String r) {
            return db.sql("SELECT max_seen FROM " + fence + " WHERE resource = '" + r + "'")
                    .map(row -> row.get(0, Long.class)).one().block(STEP);
        }

        String outcome(Flux<?> f) {
            try {
                f.blockLast(STEP);
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            }
        }

        @Override
        public void close() {
            try {
                db.sql("DROP TABLE IF EXISTS " + fence).then().block(STEP);
                db.sql("DROP TABLE IF EXISTS " + data).then().block(STEP);
            } finally {
                pool.dispose();
            }
        }
    }

    /**
     * Past both drivers' 65,535 parameters for one statement, were the checks ever batched (7 parameters a check on
     * PostgreSQL, 4 on MariaDB): every check commits, and on MariaDB every one passes again before the commit.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void manyFencedCallsInOneTransactionAllCommit(String which) {
        try (Db d = Db.open(which)) {
            int n = d.pg ? 10_000 : 17_000;
            long start = System.nanoTime();
            String out = d.outcome(d.tx.transactional(Flux.range(0, n).concatMap(i -> {
                String r = "many-" + i; // no family: no floor row created beside the transaction
                return d.store.fence(r, new FencingToken(r, 7, "h"), Flux.<Void>empty());
            })));
            System.out.println(which + ": " + n + " fenced calls in one transaction in "
                    + (System.nanoTime() - start) / 1_000_000 + " ms");
            assertThat(out).isEqualTo("ok");
            assertThat(d.db.sql("SELECT COUNT(*) FROM " + d.fence + " WHERE max_seen = 7")
                    .map(row -> ((Number) row.get(0)).longValue()).one().block(STEP)).isEqualTo((long) n);
        }
    }

    /**
     * pg_terminate_backend or KILL of the transaction's connection after the check and the write: the caller gets an
     * error, nothing of the transaction commits (on MariaDB the check run again before the commit fails first), and
     * the next token writes.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void aConnectionKilledBetweenCheckAndCommitCommitsNothing(String which) {
        try (Db d = Db.open(which)) {
            String r = "kill-" + System.nanoTime();
            FencingToken t10 = new FencingToken(r, 10, "h10");
            assertThat(d.outcome(d.tx.transactional(d.store.fence(r, t10, d.insert(r, t10).flux())))).isEqualTo("ok");
            FencingToken t33 = new FencingToken(r, 33, "h33");
            String pidSql = d.pg ? "SELECT CAST(pg_backend_pid() AS BIGINT)" : "SELECT CAST(CONNECTION_ID() AS SIGNED)";
            DatabaseClient killer = DatabaseClient.create(ConnectionFactories.get(d.pg
                    ? "r2dbc:postgresql://postgres@127.0.0.1:5432/test" : "r2dbc:mariadb://root@127.0.0.1:3306/test"));
            String t1 = d.outcome(d.tx.transactional(d.store.fence(r, t33, d.insert(r, t33)
                    .then(d.db.sql(pidSql).map(row -> ((Number) row.get(0)).longValue()).one())
                    .flatMap(pid -> killer.sql(d.pg ? "SELECT pg_terminate_backend(" + pid + ")" : "KILL " + pid)
                            .then())
                    .then(Mono.delay(Duration.ofMillis(200))).flux())));
            assertThat(t1).isNotEqualTo("ok");
            FencingToken t34 = new FencingToken(r, 34, "h34");
            assertThat(d.outcome(d.tx.transactional(d.store.fence(r, t34, d.insert(r, t34).flux())))).isEqualTo("ok");
            assertThat(d.written(r)).containsExactly(10L, 34L);
            assertThat(d.maxSeen(r)).isEqualTo(34L);
        }
    }

    /** A NOT_SUPPORTED scope suspends the store's transaction: the fenced call in it is refused, nothing written. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void notSupportedAroundAFencedCallInsideATransactionIsRefused(String which) {
        try (Db d = Db.open(which)) {
            TransactionalOperator notSupported = TransactionalOperator.create(new R2dbcTransactionManager(d.pool),
                    new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_NOT_SUPPORTED));
            String r = "ns-" + System.nanoTime();
            FencingToken t = new FencingToken(r, 5, "h");
            String out = d.outcome(d.tx.transactional(notSupported.transactional(
                    d.store.fence(r, t, d.insert(r, t).flux()))));
            assertThat(out).startsWith(OutsideTransactionException.class.getSimpleName());
            assertThat(d.written(r)).isEmpty();
            assertThat(d.maxSeen(r)).isNull();
        }
    }

    /**
     * MariaDB: the first two fenced calls of a transaction subscribed on two threads at once (each may find no checks
     * registered yet): every transaction commits, and the connection is back in auto-commit.
     */
    @ParameterizedTest
    @ValueSource(strings = {"maria"})
    void firstChecksOnTwoThreadsAtOnceCommit(String which) {
        try (Db d = Db.open(which)) {
            java.util.Map<String, Integer> outcomes = new java.util.TreeMap<>();
            for (int i = 0; i < 200; i++) {
                String r1 = "par1-" + i + "-" + System.nanoTime();
                String r2 = "par2-" + i + "-" + System.nanoTime();
                FencingToken a = new FencingToken(r1, 3, "h");
                FencingToken b = new FencingToken(r2, 3, "h");
                String out = d.outcome(d.tx.transactional(Flux.merge(
                        d.store.fence(r1, a, d.insert(r1, a).flux())
                                .subscribeOn(reactor.core.scheduler.Schedulers.parallel()),
                        d.store.fence(r2, b, d.insert(r2, b).flux())
                                .subscribeOn(reactor.core.scheduler.Schedulers.parallel()))));
                outcomes.merge(out.length() > 120 ? out.substring(0, 120) : out, 1, Integer::sum);
            }
            assertThat(outcomes).containsOnlyKeys("ok");
            // every connection of the pool (four held at once)
            List<io.r2dbc.spi.Connection> all = Flux.range(0, 4).flatMap(i -> Mono.from(d.pool.create()))
                    .collectList().block(STEP);
            try {
                for (io.r2dbc.spi.Connection connection : all) {
                    assertThat(Flux.from(connection.createStatement("SELECT IF(@@autocommit, 'on', 'off')")
                                    .execute())
                            .flatMap(result -> result.map((row, meta) -> row.get(0, String.class))).blockFirst(STEP))
                            .isEqualTo("on");
                }
            } finally {
                Flux.fromIterable(all).flatMap(io.r2dbc.spi.Connection::close).blockLast(STEP);
            }
        }
    }

    /**
     * On MariaDB, Spring and r2dbc-mariadb let a statement of a cancelled transaction (a timeout) reach the server
     * after its rollback, where the store had turned auto-commit off: it opens a transaction of its own, and putting
     * auto-commit back on committed it alone, a write without its check (a red team's probe: up to 6 in 300
     * cancelled transactions). The store's restore rolls back what is open on the connection first. Here the
     * straggler is sent by hand, after the store's own auto-commit switch, for a result that does not hang on timing.
     */
    @Test
    void aStatementArrivingAfterTheTransactionIsRolledBackWhenAutoCommitIsPutBack() {
        try (Db d = Db.open("maria")) {
            String r = "straggler-" + System.nanoTime();
            String autoCommit = Mono.usingWhen(d.pool.create(), connection -> Flux.from(connection.createStatement(
                                    "SET @fencing_autocommit = @@autocommit, autocommit = 0").execute())
                            .concatMap(io.r2dbc.spi.Result::getRowsUpdated)
                            .thenMany(Flux.from(connection.createStatement("INSERT INTO " + d.data
                                    + " (k, token) VALUES ('" + r + "', 5)").execute()))
                            .concatMap(io.r2dbc.spi.Result::getRowsUpdated)
                            .then(R2dbcFenceStore.restoreAutoCommit(connection))
                            .then(Flux.from(connection.createStatement("SELECT @@autocommit").execute())
                                    .concatMap(result -> result.map((row, meta) -> String.valueOf(row.get(0))))
                                    .single()),
                    io.r2dbc.spi.Connection::close).block(STEP);
            assertThat(autoCommit).as("auto-commit put back").isEqualTo("1");
            assertThat(d.written(r)).as("the straggler's write, seen from another connection").isEmpty();
        }
    }
}
