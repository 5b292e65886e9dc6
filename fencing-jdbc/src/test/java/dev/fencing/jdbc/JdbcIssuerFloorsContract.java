package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuerFloorsContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

/** The database lease passes the shared {@link IssuerFloorsContract}, on a table of its own. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcIssuerFloorsContract extends IssuerFloorsContract {

    private HikariDataSource pool;
    private String table;
    private JdbcTokenIssuer issuer;
    private JdbcTokenIssuer otherIssuer;

    abstract Database database();

    @BeforeAll
    void start() {
        pool = database().newPool(4);
        table = Database.uniqueTable("lease");
        issuer = JdbcTokenIssuer.builder(pool).table(table).createTableIfMissing(true).build();
    }

    @AfterAll
    void stop() {
        new JdbcTemplate(pool).execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    /** A second issuer over the same lease table, as another process (or this one restarted) builds it. */
    @Override
    protected TokenIssuer otherIssuer() {
        if (otherIssuer == null) {
            otherIssuer = JdbcTokenIssuer.builder(pool).table(table).build();
        }
        return otherIssuer;
    }

    @Override
    protected boolean perResourceCounters() {
        return true;
    }
}
