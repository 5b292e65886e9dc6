package dev.fencing.r2dbc;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

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

    @Override
    String createIntegerMaxSeenTable(String table) {
        return "CREATE TABLE " + table + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, max_seen INTEGER NOT NULL, "
                + "holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL)";
    }

    /** PostgreSQL bounds the check with a transaction-local lock_timeout and gives the caller's back after it. */
    @Test
    void theCallersLockTimeoutIsBackAfterTheCheck() {
        String r = freshResource();
        Flux<String> setting = db.sql("SELECT set_config('lock_timeout', '7s', true)").then()
                .thenMany(store.fence(r, token(r, 1, "a"),
                        db.sql("SELECT current_setting('lock_timeout')").map((row, m) -> row.get(0, String.class))
                                .all()));
        StepVerifier.create(transactions.transactional(setting)).expectNext("7s").expectComplete().verify(STEP);
    }
}
