package dev.fencing.it.reactive.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.token.FencingToken;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.r2dbc.core.R2dbcEntityTemplate;
import org.springframework.data.relational.core.query.Update;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;

import static org.springframework.data.relational.core.query.Criteria.where;
import static org.springframework.data.relational.core.query.Query.query;

/**
 * The accounts, through Spring Data R2DBC's {@link R2dbcEntityTemplate} (on tables named per test run, hence the
 * template rather than a derived repository). Every write goes through the fenced {@link #deposit}, which adds to the
 * balance and logs the token it was written with, so a test can read back what was applied and in which order.
 */
@Repository
public class AccountRepository {

    private final R2dbcEntityTemplate template;
    private final String accounts;
    private final String applied;

    public AccountRepository(R2dbcEntityTemplate template, @Value("${proof.tables.accounts}") String accounts,
                             @Value("${proof.tables.applied}") String applied) {
        this.template = template;
        this.accounts = accounts;
        this.applied = applied;
    }

    /**
     * Adds {@code amount} to account {@code id}, checked against the token for {@code account:<id>}: read, update and
     * log in the caller's transaction, after the fence check that holds the resource's fence row until it ends.
     */
    @Fenced(resource = "account", key = "#id")
    public Mono<Deposit> deposit(long id, long amount) {
        return Mono.deferContextual(context -> {
            FencingToken token = ReactiveFencing.current(context, "account:" + id);
            if (token == null) {
                return Mono.error(new IllegalStateException("the fenced write of account " + id
                        + " runs without its token in the Reactor Context"));
            }
            return template.select(Account.class).from(accounts).matching(query(where("id").is(id))).one()
                    .switchIfEmpty(Mono.error(() -> new IllegalArgumentException("no account " + id)))
                    .flatMap(account -> {
                        long balance = account.balance() + amount;
                        return template.update(Account.class).inTable(accounts)
                                .matching(query(where("id").is(id))).apply(Update.update("balance", balance))
                                .then(template.insert(AppliedToken.class).into(applied)
                                        .using(new AppliedToken(null, id, token.value())))
                                .thenReturn(new Deposit(balance, token.value()));
                    });
        });
    }
}
