package dev.fencing.sample;

import dev.fencing.annotation.Fenced;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/** The protected resource: a table of account notes. Its write is fenced per account, in the database. */
public class AccountRepository {

    private final JdbcTemplate jdbc;

    public AccountRepository(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE TABLE IF NOT EXISTS account_notes (account VARCHAR(64) PRIMARY KEY, note VARCHAR(64))");
    }

    @Fenced(resource = "accounts", key = "#account")
    public void write(String account, String value) {
        jdbc.update("MERGE INTO account_notes (account, note) KEY (account) VALUES (?, ?)", account, value);
    }

    /** Reads are not fenced. */
    public String read(String account) {
        return jdbc.query("SELECT note FROM account_notes WHERE account = ?",
                rs -> rs.next() ? rs.getString(1) : null, account);
    }
}
