package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuedTokensContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;

/** The database lease as recovery reads it: the lease row's token, its holder and expiry. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcIssuedTokensContract extends IssuedTokensContract {

    private HikariDataSource dataSource;
    private String table;
    private JdbcTokenIssuer issuer;
    private JdbcTokenIssuer otherIssuer;

    abstract Database database();

    @BeforeAll
    void create() {
        dataSource = database().newPool(4);
        table = Database.uniqueTable("issued");
        issuer = JdbcTokenIssuer.builder(dataSource).table(table).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
    }

    @AfterAll
    void drop() {
        new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + table);
        dataSource.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    /** A second issuer over the same lease table, as another process (or this one restarted) builds it. */
    @Override
    protected TokenIssuer otherIssuer() {
        if (otherIssuer == null) {
            otherIssuer = JdbcTokenIssuer.builder(dataSource).table(table).build();
        }
        return otherIssuer;
    }
}
