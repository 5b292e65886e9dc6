package dev.fencing.r2dbc;

import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.ReactiveFenceGuard;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A red team's probes of the reactive guard over the R2DBC store on PostgreSQL and MariaDB, kept as regression tests:
 * each subscription is checked (a retry or a second subscription after a newer token is refused), thread hops in the
 * body stay in the transaction, a body that throws or a second resource's refusal rolls everything back, a refused
 * or cancelled call leaves the pooled connection clean, and a newer token writes after every row of a fenced Flux.
 */
@Timeout(120)
class R2dbcReactiveRedTeamTest {

    static final Duration STEP = Duration.ofSeconds(60);

    private record Db(ConnectionPool pool, DatabaseClient db, TransactionalOperator tx, R2dbcFenceStore store,
                      ReactiveFenceGuard guard, String fence, String data, boolean pg) implements AutoCloseable {
        static Db open(String which, int size) {
            boolean pg = which.equals("pg");
            ConnectionPool pool = (ConnectionPool) ConnectionFactories.get(pg
                    ? "r2dbc:pool:postgresql://postgres@127.0.0.1:5432/test?maxSize=" + size + "&initialSize=1"
                    : "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=" + size + "&initialSize=1");
            DatabaseClient db = DatabaseClient.create(pool);
            String fence = R2dbcFenceStoreContract.uniqueTable("r2react_fence");
            String data = R2dbcFenceStoreContract.uniqueTable("r2react_data");
            R2dbcDialect dialect = pg ? R2dbcDialect.POSTGRESQL : R2dbcDialect.MARIADB;
            db.sql(dialect.sql().createTableSql(fence)).then().block(STEP);
            db.sql("CREATE TABLE " + data + " (id " + (pg ? "BIGSERIAL" : "BIGINT AUTO_INCREMENT")
                    + " PRIMARY KEY, k VARCHAR(64), token BIGINT)" + (pg ? "" : " ENGINE=InnoDB")).then().block(STEP);
            R2dbcFenceStore store = R2dbcFenceStore.builder(pool).table(fence).lockTimeout(Duration.ofSeconds(20))
                    .build();
            return new Db(pool, db, TransactionalOperator.create(new R2dbcTransactionManager(pool)), store,
                    ReactiveFenceGuard.builder(store).build(), fence, data, pg);
        }

        Mono<Void> insert(String r, FencingToken t) {
            return db.sql("INSERT INTO " + data + " (k, token) VALUES ('" + r + "', " + t.value() + ")").then();
        }

        List<Long> written(String r) {
            return db.sql("SELECT token FROM " + data + " WHERE k = '" + r + "' ORDER BY id")
                    .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
        }

        Long maxSeen(String r) {
            return db.sql("SELECT max_seen FROM " + fence + " WHERE resource = '" + r + "'")
                    .map(row -> row.get(0, Long.class)).one().block(STEP);
        }

        <T> Flux<T> fenced(String r, Supplier<? extends org.reactivestreams.Publisher<T>> body) {
            FencePoint point = new FencePoint("Probe.save()", r, null, null, false, FencingMetrics.noop());
            return guard.fence(point, new Object[0], body);
        }

        String outcome(org.reactivestreams.Publisher<?> f) {
            try {
                Flux.from(f).blockLast(STEP);
                return "ok";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName() + ": " + e.getMessage();
            }
        }

        /** The session state of the pool's only connection, read in auto-commit. */
        String session() {
            return db.sql(pg ? "SELECT current_setting('lock_timeout') || ' ' || "
                            + "COALESCE(NULLIF(current_setting('fencing.lock_depth', true), ''), '-')"
                            : "SELECT CAST(CONCAT(@@autocommit, ' ', @@in_transaction, ' ', "
                            + "IFNULL(@fencing_autocommit, '-')) AS CHAR)")
                    .map(row -> row.get(0, String.class)).one().block(STEP);
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

    private static FencingToken t(String r, long v) {
        return new FencingToken(r, v, "h" + v);
    }

    private static Mono<String> write(Db d, String r, long v) {
        return Mono.fromCallable(() -> d.outcome(d.tx.transactional(d.fenced(r, () -> d.insert(r, t(r, v))))
                .contextWrite(ReactiveFencing.bind(t(r, v))))).subscribeOn(Schedulers.boundedElastic());
    }

    /** A transaction re-subscribed (retry) after a newer token committed is refused, its write not applied. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void retryAfterANewerTokenIsRefused(String which) {
        try (Db d = Db.open(which, 2)) {
            String r = "retry-" + System.nanoTime();
            AtomicInteger attempts = new AtomicInteger();
            Flux<?> tx20 = d.tx.transactional(d.fenced(r, () -> d.insert(r, t(r, 20))
                    .then(Mono.<Void>defer(() -> attempts.incrementAndGet() == 1
                            ? Mono.<Void>error(new IllegalStateException("first")) : Mono.empty()))))
                    .contextWrite(ReactiveFencing.bind(t(r, 20)));
            String out = d.outcome(tx20.retryWhen(reactor.util.retry.Retry.max(1)
                    .doBeforeRetryAsync(signal -> write(d, r, 30).doOnNext(o -> assertThat(o).isEqualTo("ok"))
                            .then())
                    .onRetryExhaustedThrow((spec, signal) -> signal.failure())));
            assertThat(out).contains("Stale");
            assertThat(attempts).hasValue(1);
            assertThat(d.written(r)).containsExactly(30L);
            assertThat(d.maxSeen(r)).isEqualTo(30L);
        }
    }

    /** The same fenced Mono subscribed twice: each subscription is checked; the second, after a newer one, refused. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void aPublisherSubscribedAgainAfterANewerTokenIsRefused(String which) {
        try (Db d = Db.open(which, 2)) {
            String r = "twice-" + System.nanoTime();
            Flux<Void> tx20 = d.tx.transactional(d.fenced(r, () -> d.insert(r, t(r, 20))))
                    .contextWrite(ReactiveFencing.bind(t(r, 20)));
            assertThat(d.outcome(tx20)).isEqualTo("ok");
            assertThat(write(d, r, 30).block(STEP)).isEqualTo("ok");
            assertThat(d.outcome(tx20)).contains("Stale");
            assertThat(d.written(r)).containsExactly(20L, 30L);
        }
    }

    /**
     * A body whose write hops threads (subscribeOn, publishOn, fromCallable on boundedElastic) still writes in the
     * transaction: a failure after it rolls the write back with the check.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void threadHopsInTheBodyStayInTheTransaction(String which) {
        try (Db d = Db.open(which, 3)) {
            String r = "hops-" + System.nanoTime();
            Flux<Object> body = d.tx.transactional(d.fenced(r, () -> Mono.fromCallable(() -> 1)
                    .subscribeOn(Schedulers.boundedElastic())
                    .publishOn(Schedulers.parallel())
                    .flatMap(x -> d.insert(r, t(r, 20)).subscribeOn(Schedulers.boundedElastic()))
                    .then(Mono.error(new IllegalStateException("after the write")))))
                    .contextWrite(ReactiveFencing.bind(t(r, 20)));
            assertThat(d.outcome(body)).contains("after the write");
            assertThat(d.written(r)).isEmpty();
            assertThat(d.maxSeen(r)).isNull();
        }
    }

    /** A body that throws before returning its publisher: an error signal, the transaction rolled back. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void aBodyThrowingSynchronouslyRollsBack(String which) {
        try (Db d = Db.open(which, 2)) {
            String r = "sync-" + System.nanoTime();
            assertThat(write(d, r, 10).block(STEP)).isEqualTo("ok");
            Flux<Void> body = d.tx.transactional(d.<Void>fenced(r, () -> {
                throw new IllegalStateException("thrown by the method");
            })).contextWrite(ReactiveFencing.bind(t(r, 20)));
            assertThat(d.outcome(body)).contains("thrown by the method");
            assertThat(d.maxSeen(r)).isEqualTo(10L);
            assertThat(write(d, r, 15).block(STEP)).isEqualTo("ok");
        }
    }

    /** Two resources in one transaction, the second refused: the first's write rolls back too. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void twoResourcesOneRefusedRollsBackBoth(String which) {
        try (Db d = Db.open(which, 2)) {
            String a = "two-a-" + System.nanoTime();
            String b = "two-b-" + System.nanoTime();
            assertThat(write(d, b, 50).block(STEP)).isEqualTo("ok");
            Flux<?> both = d.tx.transactional(d.fenced(a, () -> d.insert(a, t(a, 20)))
                    .thenMany(d.fenced(b, () -> d.insert(b, t(b, 20)))))
                    .contextWrite(ReactiveFencing.bind(t(a, 20), t(b, 20)));
            assertThat(d.outcome(both)).contains("Stale");
            assertThat(d.written(a)).isEmpty();
            assertThat(d.maxSeen(a)).isNull();
            assertThat(d.written(b)).containsExactly(50L);
        }
    }

    /**
     * A pool of one connection: a refused check caught in the transaction (which commits) and a body cancelled while
     * it waits leave the connection as they found it (PostgreSQL: lock_timeout; MariaDB: auto-commit, no transaction
     * open), and later writes land, in a transaction or not.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void theConnectionIsCleanAfterRefusedAndCancelledChecks(String which) {
        try (Db d = Db.open(which, 1)) {
            String r = "clean-" + System.nanoTime();
            String before = d.session();
            assertThat(write(d, r, 30).block(STEP)).isEqualTo("ok");
            // refused, caught, committed
            Flux<?> caught = d.tx.transactional(d.fenced(r, () -> d.insert(r, t(r, 20)))
                    .onErrorResume(e -> Mono.empty()).thenMany(d.db.sql("SELECT 1").then()))
                    .contextWrite(ReactiveFencing.bind(t(r, 20)));
            assertThat(d.outcome(caught)).isEqualTo("ok");
            assertThat(d.session()).isEqualTo(before);
            // cancelled during the body
            Flux<Object> cancelled = d.tx.transactional(d.fenced(r, () -> d.insert(r, t(r, 40))
                    .then(Mono.never()))).contextWrite(ReactiveFencing.bind(t(r, 40)));
            assertThat(d.outcome(cancelled.timeout(Duration.ofMillis(500)))).contains("Timeout");
            assertThat(d.session()).isEqualTo(before);
            assertThat(d.written(r)).containsExactly(30L);
            assertThat(d.maxSeen(r)).isEqualTo(30L);
            assertThat(write(d, r, 35).block(STEP)).isEqualTo("ok");
            assertThat(d.session()).isEqualTo(before);
            // outside a transaction, on that connection: committed at once
            d.insert(r, t(r, 1)).block(STEP);
            assertThat(d.written(r)).containsExactly(30L, 35L, 1L);
        }
    }

    /** A fenced Flux writing several rows: a newer token checked meanwhile writes after all of them. */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void aNewerTokenWritesAfterEveryRowOfAFencedFlux(String which) {
        try (Db d = Db.open(which, 3)) {
            String r = "flux-" + System.nanoTime();
            assertThat(write(d, r, 10).block(STEP)).isEqualTo("ok");
            reactor.core.publisher.Sinks.One<Boolean> first = reactor.core.publisher.Sinks.one();
            Flux<?> many = d.tx.transactional(d.fenced(r, () -> Flux.range(0, 5)
                    .concatMap(i -> d.insert(r, t(r, 20)).then(Mono.delay(Duration.ofMillis(100)))
                            .doOnNext(x -> first.tryEmitValue(true)))))
                    .contextWrite(ReactiveFencing.bind(t(r, 20)));
            Mono<String> older = Mono.fromCallable(() -> d.outcome(many)).subscribeOn(Schedulers.boundedElastic());
            Mono<String> newer = first.asMono().then(write(d, r, 30));
            List<String> outs = Flux.merge(older, newer).collectList().block(STEP);
            assertThat(outs).containsOnly("ok");
            assertThat(d.written(r)).containsExactly(10L, 20L, 20L, 20L, 20L, 20L, 30L);
        }
    }

    /**
     * "Skip the failed items" with {@code onErrorContinue} downstream, which reaches the store's and Spring's operators
     * through the context: a refused token is skipped without its write, a SQL error in a check (a table that is not
     * there) is refused rather than taken for an accepted check, and the later items are checked and written.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pg", "maria"})
    void onErrorContinueDownstreamSkipsRefusedItemsWithoutTheirWrites(String which) {
        try (Db d = Db.open(which, 2)) {
            String r = "continue-" + System.nanoTime();
            assertThat(write(d, r, 30).block(STEP)).isEqualTo("ok");
            R2dbcFenceStore missing = R2dbcFenceStore.builder(d.pool).table(d.fence + "_missing").build();
            ReactiveFenceGuard broken = ReactiveFenceGuard.builder(missing).build();
            FencePoint point = new FencePoint("Probe.save()", r, null, null, false, FencingMetrics.noop());
            List<Throwable> skipped = new java.util.concurrent.CopyOnWriteArrayList<>();
            Flux.just(20L, -35L, 40L)
                    .concatMap(v -> d.tx.transactional(v < 0
                            ? broken.fence(point, new Object[0], () -> d.insert(r, t(r, -v)))
                            : d.fenced(r, () -> d.insert(r, t(r, v))))
                            .contextWrite(ReactiveFencing.bind(t(r, Math.abs(v)))))
                    .onErrorContinue((e, item) -> skipped.add(e))
                    .blockLast(STEP);
            assertThat(d.written(r)).containsExactly(30L, 40L);
            assertThat(d.maxSeen(r)).isEqualTo(40L);
            assertThat(skipped).hasSizeGreaterThanOrEqualTo(2);
        }
    }
}
