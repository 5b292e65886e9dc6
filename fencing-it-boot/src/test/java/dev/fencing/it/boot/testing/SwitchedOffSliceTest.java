package dev.fencing.it.boot.testing;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.data.jdbc.test.autoconfigure.DataJdbcTest;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code fencing.enabled=false} in a repository slice: the starter's warning runs there too, not silence. */
@DataJdbcTest(properties = {"spring.sql.init.schema-locations=classpath:testing/schema.sql", "fencing.enabled=false"})
class SwitchedOffSliceTest {

    @Autowired
    ApplicationContext context;

    @Autowired
    WalletRepository wallets;

    @Test
    void theSwitchIsSaidInTheSliceAndTheRepositoryRunsUnchecked() {
        assertThat(context.containsBean("dev.fencing.boot.autoconfigure.FencingDisabledAutoConfiguration")).isTrue();
        assertThat(wallets.deposit(1, 10)).isZero(); // no row, but it ran: no token was asked for
    }
}
