package dev.fencing.jdbc;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An acquisition that overran its timeout while the pool held it waiting for a connection (a database outage) says
 * how long it really took and why, instead of naming only the timeout it could not keep.
 */
class LeaseWaitMessageTest {

    @Test
    void anOverrunOfMoreThanASecondIsNamedWithThePoolsTimeout() {
        assertThat(JdbcTokenIssuer.waited(Duration.ofSeconds(10), -20_000_000_000L))
                .contains("after 30000 ms, 20000 ms past the acquire timeout")
                .contains("acquire timeout plus the pool's").contains("spring.datasource.hikari.connection-timeout");
        assertThat(JdbcTokenIssuer.waited(Duration.ofSeconds(10), -400_000_000L)).isEmpty();
    }
}
