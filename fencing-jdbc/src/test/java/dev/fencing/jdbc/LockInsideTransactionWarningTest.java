package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lock taken by {@code @Fenced(acquire = true)} inside a caller's transaction is warned of where that transaction
 * may read from a snapshot older than the lock: a transaction on MariaDB that declares no isolation (REPEATABLE READ by
 * default); not one on PostgreSQL, whose default, READ COMMITTED, reads what was committed before each statement (a
 * re-trial found the warning on every such PostgreSQL caller, from the declared isolation alone).
 */
@Timeout(60)
class LockInsideTransactionWarningTest {

    static class Stock {
        JdbcTemplate jdbc;

        @Fenced(resource = "isolation-pg", key = "#id", acquire = true)
        public void onPostgres(long id) {
        }

        @Fenced(resource = "isolation-maria", key = "#id", acquire = true)
        public void onMariaDb(long id) {
        }

        @Transactional
        public void callerOfPostgres(long id, Stock self) {
            jdbc.queryForObject("SELECT 1", Integer.class); // the caller read first: its snapshot predates the lock
            self.onPostgres(id);
        }

        @Transactional
        public void callerOfMariaDb(long id, Stock self) {
            jdbc.queryForObject("SELECT 1", Integer.class);
            self.onMariaDb(id);
        }
    }

    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class Config {
        static Database database;

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean(destroyMethod = "close")
        HikariDataSource dataSource() {
            return database.newPool(2);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Stock stock(DataSource dataSource) {
            Stock stock = new Stock();
            stock.jdbc = new JdbcTemplate(dataSource);
            return stock;
        }
    }

    @Test
    void warnedOnMariaDbsDefaultIsolationNotOnPostgreSqls() {
        // this module logs through Logback (commons-logging finds it first)
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger)
                org.slf4j.LoggerFactory.getLogger("dev.fencing.spring.support.TransactionLeaseScope");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log =
                new ch.qos.logback.core.read.ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            Config.database = Database.POSTGRESQL;
            try (var context = new AnnotationConfigApplicationContext(Config.class)) {
                Stock stock = context.getBean(Stock.class);
                stock.callerOfPostgres(1, stock);
            }
            assertThat(log.list).noneMatch(r -> r.getFormattedMessage().contains("inside a transaction"));

            Config.database = Database.MARIADB;
            try (var context = new AnnotationConfigApplicationContext(Config.class)) {
                Stock stock = context.getBean(Stock.class);
                stock.callerOfMariaDb(1, stock);
            }
            assertThat(log.list).filteredOn(r -> r.getFormattedMessage().contains("inside a transaction"))
                    .singleElement()
                    .satisfies(r -> assertThat(r.getFormattedMessage()).contains("'isolation-maria:1'"));
        } finally {
            logger.detachAppender(log);
        }
    }
}
