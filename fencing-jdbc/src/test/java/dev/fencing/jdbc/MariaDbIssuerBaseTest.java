package dev.fencing.jdbc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
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

    /**
     * The starter reads the stored bases at startup, and an application that never migrated has no base table: that
     * is read as "none" without a failed query, which the MariaDB driver logs as a WARN a new user took for a fault;
     * the same for the lease table's highest token.
     */
    @Test
    void aMissingBaseTableIsReadAsNoneWithoutTheDriverWarning() {
        Logger driver = (Logger) LoggerFactory.getLogger("org.mariadb.jdbc");
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        driver.addAppender(events);
        DriverManagerDataSource mariadb = new DriverManagerDataSource("jdbc:mariadb://127.0.0.1:3306/test", "root",
                "");
        try {
            assertThat(JdbcIssuerBase.storedBasesIfPresent(mariadb, "no_base_" + System.nanoTime())).isEmpty();
            assertThat(JdbcIssuerBase.storedBasesIfPresent(mariadb, "no_schema_" + System.nanoTime() + ".bases"))
                    .isEmpty();
            assertThat(JdbcTokenIssuer.highestInTable(mariadb, "no_lease_" + System.nanoTime())).isEmpty();
        } finally {
            driver.detachAppender(events);
        }
        assertThat(events.list).filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).isEmpty();
    }
}
