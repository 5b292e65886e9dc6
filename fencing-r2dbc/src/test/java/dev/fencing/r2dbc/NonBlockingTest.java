package dev.fencing.r2dbc;

import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing in the fence blocks: with BlockHound installed in this test JVM (it stays installed for the classes that
 * run after), accepted, rejected and refused fences subscribed on Reactor's parallel scheduler complete without a
 * {@link BlockingOperationError} on either database.
 */
class NonBlockingTest {

    private static final Duration STEP = Duration.ofSeconds(30);

    private static final String[][] DATABASES = {
            {"r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test", "POSTGRESQL"},
            {"r2dbc:pool:mariadb://root@127.0.0.1:3306/test", "MARIADB"}};

    @BeforeAll
    static void installBlockHound() {
        // one round on each database first: the JDK's and the drivers' one-time class initialization (which reads
        // files) happens here, not in the test
        for (String[] database : DATABASES) {
            new NonBlockingTest().fenceOnTheParallelScheduler(database[0], R2dbcDialect.valueOf(database[1]));
        }
        // the warm-up's workers wait in code BlockHound has not instrumented yet: new ones from here on
        Schedulers.shutdownNow();
        // with the integrations on the class path (Reactor's, Netty's): their non-blocking threads are watched
        BlockHound.install(builder -> {
            // r2dbc-mariadb reads its authentication plugins with a ServiceLoader (jar files) on the event loop
            // while it connects: the driver's, not the store's, and once per connection
            builder.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get");
            // r2dbc-mariadb 1.4.2 guards its command queue with a ReentrantLock (short sections, on any thread): the
            // driver's own locking, in these methods of its client (lambda names as compiled in 1.4.2)
            for (String method : new String[] {"executeWhenNotInTransaction", "executeWhenTransaction",
                    "lambda$receive$15", "lambda$sendCommand$17", "lambda$sendCommand$20", "setAutoCommit",
                    "sendCommandWithoutResult"}) {
                builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", method);
            }
        });
    }

    @Test
    void blockHoundIsWatchingTheParallelScheduler() {
        StepVerifier.create(Mono.fromCallable(() -> {
                    Thread.sleep(1);
                    return 1;
                }).subscribeOn(Schedulers.parallel()))
                .expectError(BlockingOperationError.class).verify(STEP);
    }

    @ParameterizedTest
    @CsvSource({"r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test, POSTGRESQL",
            "r2dbc:pool:mariadb://root@127.0.0.1:3306/test, MARIADB"})
    void theFenceDoesNotBlock(String url, R2dbcDialect dialect) {
        fenceOnTheParallelScheduler(url, dialect);
    }

    /** On fresh connections: accepted, stale and refused fences subscribed on the parallel scheduler. */
    private void fenceOnTheParallelScheduler(String url, R2dbcDialect dialect) {
        ConnectionPool pool = (ConnectionPool) ConnectionFactories.get(url + "?maxSize=4");
        DatabaseClient db = DatabaseClient.create(pool);
        TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(pool));
        String table = "nb_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        db.sql(dialect.sql().createTableSql(table)).then().block(STEP);
        try {
            R2dbcFenceStore store = R2dbcFenceStore.builder(pool).table(table).build();
            store.verify(); // blocking by contract: at startup, on this (test) thread
            String r = "nb-" + UUID.randomUUID();
            StepVerifier.create(tx.transactional(store.fence(r, new FencingToken(r, 2, "a"), Flux.just("2")))
                            .subscribeOn(Schedulers.parallel()))
                    .expectNext("2").expectComplete().verify(STEP);
            StepVerifier.create(tx.transactional(store.fence(r, new FencingToken(r, 1, "b"), Flux.just("1")))
                            .subscribeOn(Schedulers.parallel()))
                    .expectError(StaleTokenException.class).verify(STEP);
            StepVerifier.create(store.fence(r, new FencingToken(r, 3, "a"), Flux.just("3"))
                            .subscribeOn(Schedulers.parallel()))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(FenceStoreException.class)
                            .isNotInstanceOf(BlockingOperationError.class))
                    .verify(STEP);
        } finally {
            db.sql("DROP TABLE IF EXISTS " + table).then().block(STEP);
            pool.dispose();
        }
    }
}
