package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A red team's probe of the R2DBC store on MariaDB, where it turns the transaction's auto-commit off and puts the
 * connection's own setting back when the transaction ends: two fence tables in one transaction.
 */
@Timeout(90)
class R2dbcMariaDbTwoFenceTablesTest extends R2dbcMariaDbDeadlockFixture {

    R2dbcMariaDbTwoFenceTablesTest() {
        super("r2rt");
    }

    @Test
    void twoStoresOnTwoTablesInOneTransactionGiveTheConnectionBackInAutoCommit() {
        // each table's checks are held apart, and each sends SET @fencing_autocommit = @@autocommit, autocommit = 0:
        // the second keeps 0, the first's setting, and puts 0 back; the connection must still go back to its pool
        // in auto-commit (Spring's manager turns it on, having seen it off), or its later plain writes never commit
        String otherFence = R2dbcFenceStoreContract.uniqueTable("r2rt_fence2");
        run(R2dbcDialect.MARIADB.sql().createTableSql(otherFence));
        ConnectionPool one = (ConnectionPool) ConnectionFactories.get(
                "r2dbc:pool:mariadb://root@127.0.0.1:3306/test?maxSize=1");
        try {
            DatabaseClient client = DatabaseClient.create(one);
            TransactionalOperator onOne = TransactionalOperator.create(new R2dbcTransactionManager(one));
            R2dbcFenceStore first = R2dbcFenceStore.builder(one).table(fence).build();
            R2dbcFenceStore second = R2dbcFenceStore.builder(one).table(otherFence).build();
            Mono<String> autocommit = client.sql("SELECT @@autocommit").map(row -> String.valueOf(row.get(0))).one();
            String r = "two-tables-" + System.nanoTime();
            FencingToken t1 = new FencingToken(r, 1, "a");
            assertThat(outcome(onOne.transactional(first.fence(r, t1, insert(r, t1).flux())
                    .concatWith(second.fence(r, t1, Flux.<Void>empty()))))).isEqualTo("ok");
            assertThat(autocommit.block(STEP)).as("after a commit").isEqualTo("1");
            FencingToken t2 = new FencingToken(r, 2, "a");
            assertThat(outcome(onOne.transactional(first.fence(r, t2, Flux.<Void>empty())
                    .concatWith(second.fence(r, t2, insert(r, t2).then(Mono.<Void>error(
                            new IllegalStateException("boom"))).flux()))))).contains("boom");
            assertThat(autocommit.block(STEP)).as("after a rollback").isEqualTo("1");
            String plain = "plain-" + System.nanoTime();
            client.sql("INSERT INTO " + data + " (k, token) VALUES ('" + plain + "', 3)").then().block(STEP);
            assertThat(written(plain)).as("seen from another connection: committed").containsExactly(3L);
        } finally {
            one.dispose();
            run("DROP TABLE IF EXISTS " + otherFence);
        }
    }

    private List<Long> written(String r) {
        return db.sql("SELECT token FROM " + data + " WHERE k = ? ORDER BY id").bind(0, r)
                .map(row -> row.get(0, Long.class)).all().collectList().block(STEP);
    }
}
