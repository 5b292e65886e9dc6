package dev.fencing.boot.autoconfigure.app;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.stereotype.Repository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import javax.sql.DataSource;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two transaction managers in one Spring Boot application with the starter, the store's on PostgreSQL and another on
 * H2: a fenced repository called from a {@code @Transactional("otherTm")} method that the primary manager's
 * {@code @Transactional} calls is refused before its body (the check would join the primary transaction while the
 * method's writes commit with the other one), and the nesting the other way round is checked and written.
 */
@Timeout(120)
class NestedTransactionManagersApplicationTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String accountsTable = "nested_account_" + suffix;
    private final String fenceTable = "nested_max_seen_" + suffix;
    private final JdbcTemplate admin = new JdbcTemplate(new DriverManagerDataSource(URL, "postgres", ""));

    @SpringBootApplication
    @Import({Ledger.class, Primaries.class, Others.class})
    static class TwoManagersApplication {

        @Bean
        @Primary
        HikariDataSource dataSource() {
            HikariDataSource pool = new HikariDataSource();
            pool.setJdbcUrl(URL);
            pool.setUsername("postgres");
            pool.setMaximumPoolSize(4);
            return pool;
        }

        @Bean
        HikariDataSource otherDataSource() {
            HikariDataSource pool = new HikariDataSource();
            pool.setJdbcUrl("jdbc:h2:mem:nested-other-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            pool.setMaximumPoolSize(2);
            return pool;
        }

        @Bean
        @Primary
        DataSourceTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        DataSourceTransactionManager otherTm(@Qualifier("otherDataSource") DataSource otherDataSource) {
            return new DataSourceTransactionManager(otherDataSource);
        }
    }

    @Repository
    static class Ledger {
        private final JdbcTemplate jdbc;
        private final String table;

        Ledger(DataSource dataSource, Environment env) {
            this.jdbc = new JdbcTemplate(dataSource);
            this.table = env.getRequiredProperty("test.accounts-table");
        }

        @Fenced(resource = "accounts")
        public void add(long amount) {
            jdbc.update("UPDATE " + table + " SET balance = balance + ? WHERE id = 1", amount);
        }

        long balance() {
            return jdbc.queryForObject("SELECT balance FROM " + table + " WHERE id = 1", Long.class);
        }
    }

    @Service
    static class Primaries {
        private final Others others;
        private final Ledger ledger;

        Primaries(Others others, Ledger ledger) {
            this.others = others;
            this.ledger = ledger;
        }

        @Transactional
        public void throughTheOtherManager(long amount) {
            others.add(amount);
        }

        @Transactional
        public void add(long amount) {
            ledger.add(amount);
        }
    }

    @Service
    static class Others {
        private final Ledger ledger;
        private final org.springframework.beans.factory.ObjectProvider<Primaries> primaries;

        Others(Ledger ledger, org.springframework.beans.factory.ObjectProvider<Primaries> primaries) {
            this.ledger = ledger;
            this.primaries = primaries;
        }

        @Transactional("otherTm")
        public void add(long amount) {
            ledger.add(amount);
        }

        @Transactional("otherTm")
        public void aroundThePrimaryManager(long amount) {
            primaries.getObject().add(amount);
        }
    }

    private ConfigurableApplicationContext start() {
        admin.execute("CREATE TABLE " + accountsTable + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        admin.update("INSERT INTO " + accountsTable + " (id, balance) VALUES (1, 0)");
        return new SpringApplicationBuilder(TwoManagersApplication.class).web(
                org.springframework.boot.WebApplicationType.NONE).properties(
                "spring.main.banner-mode=off",
                "spring.flyway.enabled=false",
                "spring.autoconfigure.exclude=org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
                "test.accounts-table=" + accountsTable,
                "fencing.store.jdbc.table=" + fenceTable,
                "fencing.store.jdbc.initialize-schema=always").run();
    }

    @AfterEach
    void dropTables() {
        for (String table : List.of(accountsTable, fenceTable)) {
            admin.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void anotherManagersTransactionInsideThePrimaryOneIsRefusedAndTheOtherWayRoundIsChecked() {
        try (ConfigurableApplicationContext context = start()) {
            Primaries primaries = context.getBean(Primaries.class);
            Others others = context.getBean(Others.class);
            Ledger ledger = context.getBean(Ledger.class);
            try (FencingScope scope = FencingContext.bind(new FencingToken("accounts", 5, "a"))) {
                assertThatThrownBy(() -> primaries.throughTheOtherManager(7))
                        .isInstanceOf(OutsideTransactionException.class)
                        .hasMessageContaining("innermost transaction")
                        .hasMessageContaining("'otherTm' (DataSourceTransactionManager)")
                        .hasMessageContaining("'accounts'");
                assertThat(ledger.balance()).isZero();
                assertThat(maxSeen()).isEmpty();

                others.aroundThePrimaryManager(7);
                assertThat(ledger.balance()).isEqualTo(7);
                assertThat(maxSeen()).containsExactly(5L);
            }
            try (FencingScope scope = FencingContext.bind(new FencingToken("accounts", 4, "z"))) {
                assertThatThrownBy(() -> others.aroundThePrimaryManager(100))
                        .isInstanceOf(dev.fencing.rule.StaleTokenException.class);
            }
            assertThat(ledger.balance()).isEqualTo(7);
        }
    }

    private List<Long> maxSeen() {
        return admin.queryForList("SELECT max_seen FROM " + fenceTable + " WHERE resource = 'accounts'", Long.class);
    }
}
