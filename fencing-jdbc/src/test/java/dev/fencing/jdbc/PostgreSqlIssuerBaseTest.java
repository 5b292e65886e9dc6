package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The issuer base table, the fence table's listing and the floor raise after a restore, on POSTGRESQL. */
class PostgreSqlIssuerBaseTest extends JdbcIssuerBaseContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }

    /** A database that cannot be reached has not said the table is missing: no "none stored" from it. */
    @Test
    void anUnreachableDatabaseIsNotAMissingTable() {
        DriverManagerDataSource unreachable = new DriverManagerDataSource(
                "jdbc:postgresql://127.0.0.1:1/test?connectTimeout=2", "postgres", "");
        assertThatThrownBy(() -> JdbcIssuerBase.storedBasesIfPresent(unreachable, JdbcIssuerBase.DEFAULT_TABLE))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("cannot connect");
    }
}
