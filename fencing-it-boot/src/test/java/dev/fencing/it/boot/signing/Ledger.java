package dev.fencing.it.boot.signing;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/** The fenced write: one account's balance, fenced as {@code accounts:ID}. */
@Repository
public class Ledger {

    private final JdbcTemplate jdbc;

    public Ledger(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Adds {@code amount} and returns the token value the write was made with. */
    @Fenced(resource = "accounts", key = "#id")
    public long deposit(long id, long amount) {
        jdbc.update("UPDATE proof_account SET balance = balance + ? WHERE id = ?", amount, id);
        return FencingContext.current("accounts:" + id).value();
    }
}
