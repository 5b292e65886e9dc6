package dev.fencing.it.reactive.testing;

import dev.fencing.context.MissingTokenException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.data.r2dbc.test.autoconfigure.DataR2dbcTest;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code @DataR2dbcTest} with nothing added: the slice brings the fence (the starter registers it for Boot's R2DBC
 * repository slice), so a fenced reactive repository method is checked in the slice as in the application, on the
 * reactive store's table on PostgreSQL (named per run, dropped after).
 */
@DataR2dbcTest(properties = "spring.r2dbc.url=r2dbc:postgresql://postgres@127.0.0.1:5432/test")
class ReactiveRepositorySliceTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final String FENCE = "rx_slice_fence_"
            + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
    private static final DatabaseClient SQL = DatabaseClient.create(
            ConnectionFactories.get("r2dbc:postgresql://postgres@127.0.0.1:5432/test"));

    @DynamicPropertySource
    static void fenceTable(DynamicPropertyRegistry properties) {
        properties.add("fencing.store.r2dbc.table", () -> FENCE);
    }

    @BeforeAll
    static void createFenceTable() {
        SQL.sql(FenceSql.POSTGRESQL.createTableSql(FENCE)).then().block(TIMEOUT);
    }

    @AfterAll
    static void dropFenceTable() {
        SQL.sql("DROP TABLE IF EXISTS " + FENCE).then().block(TIMEOUT);
    }

    @Autowired
    Pings pings;

    @Autowired
    ReactiveTransactionManager transactions;

    private Mono<Long> ping(FencingToken token) {
        Mono<Long> ping = TransactionalOperator.create(transactions).transactional(pings.ping(1, 5));
        return token == null ? ping : ping.contextWrite(ReactiveFencing.bind(token));
    }

    @Test
    void theReactiveRepositoryIsFencedInItsSlice() {
        StepVerifier.create(ping(null)).expectError(MissingTokenException.class).verify(TIMEOUT);
        StepVerifier.create(ping(new FencingToken("pings:1", 5, "test"))).expectNextCount(1).expectComplete()
                .verify(TIMEOUT);
        StepVerifier.create(ping(new FencingToken("pings:1", 4, "zombie")))
                .expectErrorSatisfies(e -> org.assertj.core.api.Assertions.assertThat(e)
                        .isInstanceOf(StaleTokenException.class).hasMessageContaining("max_seen is 5"))
                .verify(TIMEOUT);
    }
}
