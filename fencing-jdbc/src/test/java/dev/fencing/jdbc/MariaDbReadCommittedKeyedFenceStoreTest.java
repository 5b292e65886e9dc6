package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC store contract on MariaDB in READ COMMITTED, for resources with a family: the check's read of the family
 * floor is then a consistent read of the latest committed floor, without the shared gap lock that REPEATABLE READ
 * takes on an absent floor row, so concurrent first checks of a family's new resources do not deadlock.
 */
class MariaDbReadCommittedKeyedFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }

    @Override
    HikariDataSource newPool(int size) {
        return Database.MARIADB.newPoolWith(size, "sessionVariables=tx_isolation='READ-COMMITTED'");
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }

    @Test
    void theConnectionsReadCommitted() {
        assertThat(jdbc.queryForObject("SELECT @@tx_isolation", String.class)).isEqualTo("READ-COMMITTED");
    }
}
