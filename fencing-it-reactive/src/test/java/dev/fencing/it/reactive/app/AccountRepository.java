package dev.fencing.it.reactive.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.token.FencingToken;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;

/**
 * The accounts, through Spring Data R2DBC's {@link DatabaseClient}. Every write goes through the fenced
 * {@link #deposit}, which adds to the balance and logs the token it was written with in the applied table (in the order
 * the database applied the writes: the log's identity column), so a test can read back what was applied and when.
 */
@Repository
public class AccountRepository {

    private final DatabaseClient database;
    private final String accounts;
    private final String applied;

    public AccountRepository(DatabaseClient database, @Value("${proof.tables.accounts}") String accounts,
                             @Value("${proof.tables.applied}") String applied) {
        this.database = database;
        this.accounts = accounts;
        this.applied = applied;
    }

    /** Adds {@code amount} to account {@code id}: checked against the token for {@code account:<id>}. */
    @Fenced(resource = "account", key = "#id")
    public Mono<Deposit> deposit(long id, long amount) {
        return Mono.deferContextual(context -> {
            FencingToken token = ReactiveFencing.current(context, "account:" + id);
            if (token == null) {
                return Mono.error(new IllegalStateException("the fenced write of account " + id
                        + " runs without its token in the Reactor Context"));
            }
            return database.sql("UPDATE " + accounts + " SET balance = balance + :amount WHERE id = :id "
                            + "RETURNING balance")
                    .bind("amount", amount).bind("id", id)
                    .map(row -> row.get("balance", Long.class)).one()
                    .switchIfEmpty(Mono.error(() -> new IllegalArgumentException("no account " + id)))
                    .flatMap(balance -> database.sql("INSERT INTO " + applied + " (account_id, token) "
                                    + "VALUES (:id, :token)")
                            .bind("id", id).bind("token", token.value())
                            .fetch().rowsUpdated()
                            .thenReturn(new Deposit(balance, token.value())));
        });
    }
}
