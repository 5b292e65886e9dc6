package dev.fencing.r2dbc;

import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.TransientFenceFailure;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link R2dbcFenceStoreContract} on the PostgreSQL server at 127.0.0.1:5432 ({@code r2dbc-postgresql}). */
class R2dbcFenceStorePostgresContractTest extends R2dbcFenceStoreContract {

    @Override
    String url() {
        return "r2dbc:postgresql://postgres@127.0.0.1:5432/test";
    }

    @Override
    R2dbcDialect dialect() {
        return R2dbcDialect.POSTGRESQL;
    }

    /** A user that may only read the table was told to recreate it; now the grant (a new user's re-trial). */
    @Test
    void verifyNamesTheGrantForAUserThatCannotWrite() {
        String role = "r2_reader_" + Long.toHexString(System.nanoTime());
        db.sql("CREATE ROLE " + role + " LOGIN").then().block(Duration.ofSeconds(30));
        try {
            db.sql("GRANT SELECT ON " + fenceTable + " TO " + role).then().block(Duration.ofSeconds(30));
            io.r2dbc.spi.ConnectionFactory reader = io.r2dbc.spi.ConnectionFactories.get(
                    "r2dbc:postgresql://" + role + "@127.0.0.1:5432/test");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> R2dbcFenceStore.builder(reader)
                            .table(fenceTable).build().verify())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("exists but cannot be written")
                    .hasMessageContaining("grant the application's database user")
                    .hasMessageNotContaining("recreate the table");
        } finally {
            db.sql("REVOKE ALL ON " + fenceTable + " FROM " + role).then().block(Duration.ofSeconds(30));
            db.sql("DROP ROLE " + role).then().block(Duration.ofSeconds(30));
        }
    }

    @Override
    String weakenTable(String table) {
        return "ALTER TABLE " + table + " SET UNLOGGED";
    }

    @Override
    String weakenedSays() {
        return "is UNLOGGED";
    }

    @Override
    String createIntegerMaxSeenTable(String table) {
        return "CREATE TABLE " + table + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, max_seen INTEGER NOT NULL, "
                + "holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL)";
    }

    /**
     * PostgreSQL bounds the check with a transaction-local lock_timeout and gives the caller's back after it: on the
     * insert path, on the update path, and after a rejection (the statement returns the row either way).
     */
    @Test
    void theCallersLockTimeoutIsBackAfterTheCheck() {
        String r = freshResource();
        StepVerifier.create(transactions.transactional(settingAfter(r, 2))).expectNext("7s").expectComplete()
                .verify(STEP);
        StepVerifier.create(transactions.transactional(settingAfter(r, 3))).expectNext("7s").expectComplete()
                .verify(STEP);
        Flux<String> stale = settingAfter(r, 1).onErrorResume(StaleTokenException.class,
                e -> db.sql("SELECT current_setting('lock_timeout')").map((row, m) -> row.get(0, String.class)).all());
        StepVerifier.create(transactions.transactional(stale)).expectNext("7s").expectComplete().verify(STEP);
    }

    /**
     * Two checks at once in one transaction (two fenced calls zipped): the second swap kept the first's bound as the
     * caller's, and the caller's own lock_timeout was replaced by the store's for the rest of the transaction. The
     * swaps now count how deep they are, and only the last check out puts the caller's back.
     */
    @Test
    void theCallersLockTimeoutIsBackAfterTwoChecksAtOnce() {
        String a = freshResource();
        String b = freshResource();
        Flux<String> both = db.sql("SELECT set_config('lock_timeout', '7s', true)").then()
                .thenMany(Flux.merge(store.fence(a, token(a, 1, "a"), Flux.just("a")),
                        store.fence(b, token(b, 1, "b"), Flux.just("b")), store.fence(a, token(a, 2, "a"),
                                Flux.just("a2"))).then()
                        .thenMany(db.sql("SELECT current_setting('lock_timeout')")
                                .map((row, m) -> row.get(0, String.class)).all()));
        StepVerifier.create(transactions.transactional(both)).expectNext("7s").expectComplete().verify(STEP);
    }

    private Flux<String> settingAfter(String r, long token) {
        return db.sql("SELECT set_config('lock_timeout', '7s', true)").then()
                .thenMany(store.fence(r, token(r, token, "a"),
                        db.sql("SELECT current_setting('lock_timeout')").map((row, m) -> row.get(0, String.class))
                                .all()));
    }

    /**
     * The check is two statements, two round trips: the query that swaps in its lock wait bound (a statement of its
     * own: the check takes its table lock before anything in it runs), and the check, whose RETURNING puts the caller's
     * bound back (it was three: a query of its own for that).
     */
    @Test
    void aCheckIsTwoStatements() {
        AtomicInteger statements = new AtomicInteger();
        ConnectionFactory counting = countingStatements(pool, statements);
        R2dbcFenceStore counted = R2dbcFenceStore.builder(counting).table(fenceTable).build();
        TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(counting));
        String r = freshResource();
        StepVerifier.create(tx.transactional(counted.fence(r, token(r, 1, "a"), Flux.just("w")))).expectNext("w")
                .expectComplete().verify(STEP);
        StepVerifier.create(tx.transactional(counted.fence(r, token(r, 2, "a"), Flux.just("w")))).expectNext("w")
                .expectComplete().verify(STEP);
        assertThat(statements).hasValue(4);
    }

    /** The bound covers the wait for the table's lock (taken when the check is parsed), behind a LOCK TABLE. */
    @Test
    void theBoundCoversTheWaitForTheTablesLock() throws Exception {
        R2dbcFenceStore impatient = R2dbcFenceStore.builder(pool).table(fenceTable)
                .lockTimeout(Duration.ofMillis(500)).build();
        String r = freshResource();
        Connection locker = Mono.from(pool.create()).block(STEP);
        try {
            Mono.from(locker.beginTransaction()).block(STEP);
            Flux.from(locker.createStatement("LOCK TABLE " + fenceTable + " IN SHARE ROW EXCLUSIVE MODE").execute())
                    .flatMap(result -> result.getRowsUpdated()).blockLast(STEP);
            long started = System.nanoTime();
            StepVerifier.create(transactions.transactional(impatient.fence(r, token(r, 1, "a"), Flux.just("w"))))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(R2dbcFenceTransientException.class,
                            busy -> assertThat(busy.reason()).isEqualTo(TransientFenceFailure.Reason.BUSY)))
                    .verify(STEP);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(400),
                    Duration.ofSeconds(10));
        } finally {
            Mono.from(locker.rollbackTransaction()).block(STEP);
            Mono.from(locker.close()).block(STEP);
        }
    }

    /** The caller's statement_timeout, shorter than the check's bound, ends a waiting check as busy, not an error. */
    @Test
    void theCallersStatementTimeoutEndsAWaitingCheckAsBusy() throws Exception {
        String r = freshResource();
        Sinks.Empty<Void> release = Sinks.empty();
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        var first = transactions.transactional(store.fence(r, token(r, 10, "a"),
                release.asMono().doOnSubscribe(s -> holding.countDown()).thenMany(Flux.just("10"))))
                .collectList().toFuture();
        assertThat(holding.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        Flux<String> impatient = db.sql("SET LOCAL statement_timeout = '300ms'").then()
                .thenMany(store.fence(r, token(r, 11, "b"), Flux.just("11")));
        StepVerifier.create(transactions.transactional(impatient))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(R2dbcFenceTransientException.class,
                        busy -> assertThat(busy.reason()).isEqualTo(TransientFenceFailure.Reason.BUSY))
                        .hasMessageContaining("statement timeout"))
                .verify(STEP);
        release.tryEmitEmpty();
        assertThat(first.get(30, java.util.concurrent.TimeUnit.SECONDS)).containsExactly("10");
    }

    /** {@code factory}, its connections counting the statements created on them. */
    private static ConnectionFactory countingStatements(ConnectionFactory factory, AtomicInteger statements) {
        return new ConnectionFactory() {
            @Override
            public Publisher<? extends Connection> create() {
                return Mono.from(factory.create()).map(c -> (Connection) Proxy.newProxyInstance(
                        Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                            if (method.getName().equals("createStatement")) {
                                statements.incrementAndGet();
                            }
                            try {
                                return method.invoke(c, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }));
            }

            @Override
            public ConnectionFactoryMetadata getMetadata() {
                return factory.getMetadata();
            }
        };
    }
}
