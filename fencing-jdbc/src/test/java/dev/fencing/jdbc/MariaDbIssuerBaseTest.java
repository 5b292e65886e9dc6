package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The issuer base table, the fence table's listing and the floor raise after a restore, on MARIADB. */
class MariaDbIssuerBaseTest extends JdbcIssuerBaseContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }

    /** A MEMORY base table loses its rows with a restart; every instance would then store a base again. */
    @Test
    void aBaseTableOnTheMemoryEngineIsRefused() {
        String table = "memory_base_" + Long.toHexString(System.nanoTime());
        DriverManagerDataSource mariadb = new DriverManagerDataSource("jdbc:mariadb://127.0.0.1:3306/test", "root",
                "");
        JdbcTemplate jdbc = new JdbcTemplate(mariadb);
        new JdbcIssuerBase(mariadb, table, true);
        try {
            jdbc.execute("ALTER TABLE " + table + " ENGINE=MEMORY");
            assertThatThrownBy(() -> new JdbcIssuerBase(mariadb, table))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Issuer base table '" + table + "' uses the MEMORY storage engine");
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }
}
