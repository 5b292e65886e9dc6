package dev.fencing.it.reactive;

import dev.fencing.store.sql.FenceSql;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.springframework.r2dbc.core.DatabaseClient;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The proof's tables on the real PostgreSQL ({@code 127.0.0.1:5432}, database {@code test}, user {@code postgres}),
 * named uniquely per run: the accounts, the log of applied tokens (in the order the database applied them) and the
 * fence table, created from the script fencing-r2dbc's store ships. Read back with plain SQL on a connection of its
 * own, outside the application.
 */
final class ProofDatabase {

    static final String URL = "r2dbc:postgresql://127.0.0.1:5432/test";
    static final String USER = "postgres";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    final String accounts;
    final String applied;
    final String fence;
    private final DatabaseClient sql;

    ProofDatabase() {
        String run = "proof_rx_" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
        accounts = run + "_accounts";
        applied = run + "_applied";
        fence = run + "_fence";
        ConnectionFactory factory = ConnectionFactories.get("r2dbc:postgresql://" + USER + "@127.0.0.1:5432/test");
        sql = DatabaseClient.create(factory);
    }

    /** Creates the three tables and accounts 1 to {@code count}, each with a balance of 0. */
    void create(int count) {
        execute(FenceSql.POSTGRESQL.createTableSql(fence));
        execute("CREATE TABLE " + accounts + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        execute("CREATE TABLE " + applied + " (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                + "account_id BIGINT NOT NULL, token BIGINT NOT NULL)");
        execute("INSERT INTO " + accounts + " (id, balance) SELECT n, 0 FROM generate_series(1, " + count + ") n");
    }

    void drop() {
        execute("DROP TABLE IF EXISTS " + accounts);
        execute("DROP TABLE IF EXISTS " + applied);
        execute("DROP TABLE IF EXISTS " + fence);
    }

    long balance(long id) {
        return sql.sql("SELECT balance FROM " + accounts + " WHERE id = :id").bind("id", id)
                .map(row -> row.get(0, Long.class)).one().blockOptional(TIMEOUT).orElseThrow();
    }

    /** max_seen of {@code resource} as committed; empty when the fence table has no row for it. */
    OptionalLong maxSeen(String resource) {
        return sql.sql("SELECT max_seen FROM " + fence + " WHERE resource = :resource").bind("resource", resource)
                .map(row -> row.get(0, Long.class)).one().blockOptional(TIMEOUT)
                .map(OptionalLong::of).orElse(OptionalLong.empty());
    }

    /** The tokens of the writes applied to account {@code id}, in the order the database applied them. */
    List<Long> appliedTokens(long id) {
        return sql.sql("SELECT token FROM " + applied + " WHERE account_id = :id ORDER BY seq").bind("id", id)
                .map(row -> row.get(0, Long.class)).all().collectList().block(TIMEOUT);
    }

    private void execute(String statement) {
        sql.sql(statement).then().block(TIMEOUT);
    }
}
