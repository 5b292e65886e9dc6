package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.Ordered;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * On PostgreSQL, Spring R2DBC and r2dbc-postgresql let a statement of a fenced body that was on its way when the
 * transaction was cancelled (a short {@code timeout}) reach the connection after the transaction's ROLLBACK, where it
 * ran in auto-commit and committed alone, its check rolled back: a write max_seen does not record. A sweep of
 * cancellations on a pool of one connection, each write on a resource of its own, finds no committed write without
 * its fence row. The store seals a rolled-back fenced transaction's session read-only ({@link RollbackSeal}); the
 * straggler is also sent by hand, deterministically, after the rollback.
 */
@Timeout(240)
class R2dbcPostgresCancelledWriteTest {

    static final Duration STEP = Duration.ofSeconds(60);

    @Test
    void aCancelledFencedWriteNeverCommitsWithoutItsCheck() throws Exception {
        ConnectionPool other = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=1");
        DatabaseClient db = DatabaseClient.create(other);
        String fence = R2dbcFenceStoreContract.uniqueTable("r2pgcancel_fence");
        String data = R2dbcFenceStoreContract.uniqueTable("r2pgcancel_data");
        OnePool one = new OnePool(fence);
        try {
            db.sql(R2dbcDialect.POSTGRESQL.sql().createTableSql(fence)).then().block(STEP);
            db.sql("CREATE TABLE " + data + " (k VARCHAR(64), token BIGINT)").then().block(STEP);
            String prefix = "pgc-" + System.nanoTime() + "-";
            int cancelled = 0;
            int replaced = 0;
            for (int i = 0; i < 600; i++) {
                String r = prefix + i;
                FencingToken token = new FencingToken(r, 7, "h");
                // the pool's connection warm and ready: the timeout then falls within the transaction, not in the
                // connecting. A transaction cancelled as it takes its connection can keep it for ever (Spring R2DBC
                // and r2dbc-pool, with or without the fence: seen about once in ten sweeps), leaving this pool of
                // one empty: a new pool takes its place (what the lost connection holds is never committed)
                try {
                    one.client.sql("SELECT 1").then().block(Duration.ofSeconds(5));
                } catch (IllegalStateException lost) {
                    one.pool.dispose();
                    one = new OnePool(fence);
                    replaced++;
                    one.client.sql("SELECT 1").then().block(STEP);
                }
                Mono<Void> insert = one.client.sql("INSERT INTO " + data + " (k, token) VALUES ('" + r + "', 7)")
                        .then();
                try {
                    one.tx.transactional(one.store.fence(r, token, insert.flux()))
                            .timeout(Duration.ofNanos(200_000L + 160_000L * (i % 30))).blockLast(STEP);
                } catch (RuntimeException e) {
                    cancelled++;
                }
            }
            Thread.sleep(500); // stragglers of the last cancellations
            List<String> unchecked = db.sql("SELECT d.k FROM " + data + " d WHERE NOT EXISTS (SELECT 1 FROM " + fence
                            + " f WHERE f.resource = d.k AND f.max_seen >= d.token) ORDER BY d.k")
                    .map(row -> row.get(0, String.class)).all().collectList().block(STEP);
            Long committed = db.sql("SELECT count(*) FROM " + data).map(row -> row.get(0, Long.class)).one()
                    .block(STEP);
            System.out.println("R2dbcPostgresCancelledWriteTest: cancelled " + cancelled + ", committed " + committed
                    + ", pools replaced " + replaced + ", unchecked " + unchecked);
            // the sweep covers both sides of the write: transactions cancelled, and transactions that got to commit
            // (on a quiet machine a transaction takes about a millisecond: a sixth of the timeouts fall before its end)
            assertThat(cancelled).as("transactions cancelled").isGreaterThan(30);
            assertThat(committed).as("writes committed").isGreaterThan(10);
            assertThat(unchecked).as("writes committed without their fence check").isEmpty();
        } finally {
            one.pool.dispose();
            db.sql("DROP TABLE IF EXISTS " + fence).then().block(STEP);
            db.sql("DROP TABLE IF EXISTS " + data).then().block(STEP);
            other.dispose();
        }
    }

    /** A pool of one connection, with the store, client and transactions of the sweep on it. */
    private static final class OnePool {
        final ConnectionPool pool = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=1");
        final DatabaseClient client = DatabaseClient.create(pool);
        final TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(pool));
        final R2dbcFenceStore store;

        OnePool(String fence) {
            store = R2dbcFenceStore.builder(pool).table(fence).build();
        }
    }

    private static Mono<Void> run(Connection connection, String sql) {
        return Flux.from(connection.createStatement(sql).execute()).concatMap(Result::getRowsUpdated).then();
    }

    @Test
    void aStatementAfterTheSealRunsReadOnlyAndOneBeforeItIsRolledBack() {
        // the seal's one message: the transaction's write before it is rolled back, a statement after it fails
        ConnectionPool one = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=1");
        DatabaseClient db = DatabaseClient.create(one);
        String data = R2dbcFenceStoreContract.uniqueTable("r2pgseal_data");
        try {
            db.sql("CREATE TABLE " + data + " (k VARCHAR(64), token BIGINT)").then().block(STEP);
            Connection connection = Mono.from(one.create()).block(STEP);
            try {
                run(connection, "BEGIN READ WRITE").block(STEP);
                run(connection, "INSERT INTO " + data + " VALUES ('before', 1)").block(STEP);
                run(connection, RollbackSeal.SEAL_SQL).block(STEP);
                assertThatThrownBy(() -> run(connection, "INSERT INTO " + data + " VALUES ('after', 2)").block(STEP))
                        .hasMessageContaining("read-only");
                // a transaction begun READ WRITE, as Spring's R2dbcTransactionManager begins one, still writes
                run(connection, "BEGIN READ WRITE").block(STEP);
                run(connection, "INSERT INTO " + data + " VALUES ('rw', 3)").block(STEP);
                run(connection, "COMMIT").block(STEP);
                // unsealed, the session writes in auto-commit again
                run(connection, RollbackSeal.UNSEAL_SQL).block(STEP);
                run(connection, "INSERT INTO " + data + " VALUES ('plain', 4)").block(STEP);
            } finally {
                Mono.from(connection.close()).block(STEP);
            }
            assertThat(db.sql("SELECT k FROM " + data + " ORDER BY token").map(row -> row.get(0, String.class)).all()
                    .collectList().block(STEP)).containsExactly("rw", "plain");
        } finally {
            db.sql("DROP TABLE IF EXISTS " + data).then().block(STEP);
            one.dispose();
        }
    }

    @Test
    void aStatementOfTheBodyArrivingAfterTheRollbackDoesNotCommit() {
        // the straggler by hand: a fenced transaction fails after its check, and a statement of its body is sent on
        // its connection once Spring rolled the transaction back (by a synchronization's afterCompletion)
        ConnectionPool one = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=1");
        DatabaseClient db = DatabaseClient.create(one);
        String fence = R2dbcFenceStoreContract.uniqueTable("r2pgseal_fence");
        String data = R2dbcFenceStoreContract.uniqueTable("r2pgseal_data");
        try {
            db.sql(R2dbcDialect.POSTGRESQL.sql().createTableSql(fence)).then().block(STEP);
            db.sql("CREATE TABLE " + data + " (k VARCHAR(64), token BIGINT)").then().block(STEP);
            TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(one));
            R2dbcFenceStore store = R2dbcFenceStore.builder(one).table(fence).build();
            String r = "seal-" + System.nanoTime();
            AtomicReference<String> straggler = new AtomicReference<>("not sent");
            /* a statement of the body sent on the transaction's connection after Spring's rollback */
            final class Straggler implements TransactionSynchronization, Ordered {
                private final Connection connection;

                Straggler(Connection connection) {
                    this.connection = connection;
                }

                @Override
                public int getOrder() {
                    return Ordered.LOWEST_PRECEDENCE - 1; // before the store's seal's
                }

                @Override
                public Mono<Void> afterCompletion(int status) {
                    // onErrorStop: Spring runs the synchronizations under an onErrorContinue, which would drop the
                    // statement's error
                    return run(connection, "INSERT INTO " + data + " VALUES ('" + r + "', 8)").onErrorStop()
                            .then(Mono.fromRunnable(() -> straggler.set("committed")))
                            .onErrorResume(e -> Mono.fromRunnable(() -> straggler.set(e.getMessage())))
                            .then();
                }
            }
            Mono<Void> late = TransactionSynchronizationManager.forCurrentTransaction()
                    .doOnNext(s -> s.registerSynchronization(new Straggler(store.transactionConnection(s)))).then();
            Mono<Void> body = db.sql("INSERT INTO " + data + " VALUES ('" + r + "', 7)").then()
                    .then(late)
                    .then(Mono.error(new IllegalStateException("the body fails")));
            assertThatThrownBy(() -> tx.transactional(store.fence(r, new FencingToken(r, 7, "h"), body.flux()))
                    .blockLast(STEP)).isInstanceOf(IllegalStateException.class).hasMessage("the body fails");
            assertThat(straggler.get()).contains("read-only");
            assertThat(db.sql("SELECT count(*) FROM " + data).map(row -> row.get(0, Long.class)).one().block(STEP))
                    .isZero();
            // the pool's connection is back to its own default: writes outside a transaction commit
            assertThat(db.sql("SELECT current_setting('default_transaction_read_only')")
                    .map(row -> row.get(0, String.class)).one().block(STEP)).isEqualTo("off");
            db.sql("INSERT INTO " + data + " VALUES ('plain', 1)").then().block(STEP);
        } finally {
            db.sql("DROP TABLE IF EXISTS " + fence).then().block(STEP);
            db.sql("DROP TABLE IF EXISTS " + data).then().block(STEP);
            one.dispose();
        }
    }
}
