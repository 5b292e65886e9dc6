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

    /** An UNLOGGED base table loses its rows to crash recovery; every instance would then store a base again. */
    @Test
    void anUnloggedBaseTableIsRefused() {
        String table = "unlogged_base_" + Long.toHexString(System.nanoTime());
        org.springframework.jdbc.datasource.DriverManagerDataSource postgres =
                new org.springframework.jdbc.datasource.DriverManagerDataSource(
                        "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
        org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(postgres);
        new JdbcIssuerBase(postgres, table, true);
        try {
            jdbc.execute("ALTER TABLE " + table + " SET UNLOGGED");
            assertThatThrownBy(() -> new JdbcIssuerBase(postgres, table))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Issuer base table '" + table + "' is UNLOGGED");
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
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
