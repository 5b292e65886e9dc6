package dev.fencing.it.boot.testing;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.data.jdbc.test.autoconfigure.DataJdbcTest;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @DataJdbcTest} with nothing added: the slice brings the fence (the starter registers it for Boot's repository
 * slices), so the repository is checked as in the application, on the slice's embedded database, and the test's
 * rollback takes the fence row with it.
 */
// tag::repository-slice[]
@DataJdbcTest(properties = "spring.sql.init.schema-locations=classpath:testing/schema.sql")
class RepositorySliceTest {

    @Autowired
    WalletRepository wallets;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void theRepositoryIsFencedInItsSlice() throws Exception {
        jdbc.update("INSERT INTO tested_wallet (id, balance) VALUES (1, 0)");
        assertThatThrownBy(() -> wallets.deposit(1, 10)).isInstanceOf(MissingTokenException.class);
        FencingContext.run(new FencingToken("wallets:1", 5, "test"), () -> wallets.deposit(1, 10));
        assertThatThrownBy(() -> FencingContext.call(new FencingToken("wallets:1", 4, "zombie"),
                () -> wallets.deposit(1, 100))).isInstanceOf(StaleTokenException.class)
                .hasMessageContaining("max_seen is 5");
        assertThat(jdbc.queryForObject("SELECT balance FROM tested_wallet WHERE id = 1", Long.class)).isEqualTo(10);
    }
    // end::repository-slice[]

    /** The test before rolled back: its fence row too, so token 1 is new again here (whichever runs first). */
    @Test
    void eachTestStartsFromAnEmptyFence() throws Exception {
        jdbc.update("INSERT INTO tested_wallet (id, balance) VALUES (1, 0)");
        FencingContext.run(new FencingToken("wallets:1", 1, "test"), () -> wallets.deposit(1, 1));
        assertThat(jdbc.queryForObject("SELECT balance FROM tested_wallet WHERE id = 1", Long.class)).isEqualTo(1);
    }
}
