package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.repository.config.AbstractJdbcConfiguration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.jdbc.repository.query.Modifying;
import org.springframework.data.jdbc.repository.query.Query;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcOperations;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Spring Data JDBC repository interface whose methods carry {@code @Fenced}, on PostgreSQL: the fence runs in
 * the repository's transaction and rejects the zombie. The run works in a schema of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringDataJdbcTest {

    @Table("account_note")
    static class AccountNote {
        @Id
        Long id;
        String account;
        long token;
        String text;

        AccountNote() {
        }

        AccountNote(String account, long token, String text) {
            this.account = account;
            this.token = token;
            this.text = text;
        }

        public String getAccount() {
            return account;
        }
    }

    interface AccountNoteRepository extends CrudRepository<AccountNote, Long> {

        @Override
        @Fenced(resource = "account-notes", key = "#entity.account")
        <S extends AccountNote> S save(S entity);

        @Fenced(resource = "account-notes", key = "#account")
        long deleteByAccount(String account);

        @Fenced(resource = "account-notes", key = "#account")
        @Modifying
        @Query("UPDATE account_note SET text = :text, token = :token WHERE account = :account")
        int rewrite(String account, String text, long token);

        List<AccountNote> findByAccountOrderById(String account);
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcTest.class,
            includeFilters = @org.springframework.context.annotation.ComponentScan.Filter(
                    type = org.springframework.context.annotation.FilterType.ASSIGNABLE_TYPE,
                    classes = AccountNoteRepository.class))
    @EnableFencing
    static class Config extends AbstractJdbcConfiguration {
        @Bean
        NamedParameterJdbcOperations namedParameterJdbcOperations(DataSource dataSource) {
            return new NamedParameterJdbcTemplate(dataSource);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
            return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager).build();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    private final String schema = "fencing_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private HikariDataSource pool;
    private AnnotationConfigApplicationContext context;
    private AccountNoteRepository repository;

    @BeforeAll
    void start() {
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("CREATE SCHEMA " + schema);
        }
        pool = Database.postgresInSchema(4, schema);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        jdbc.execute(JdbcDialect.POSTGRESQL.createTableSql(JdbcFenceStore.DEFAULT_TABLE));
        jdbc.execute("CREATE TABLE account_note (id BIGSERIAL PRIMARY KEY, account VARCHAR(64) NOT NULL, "
                + "token BIGINT NOT NULL, text VARCHAR(16) NOT NULL)");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(DataSource.class, () -> pool);
        context.register(Config.class);
        context.refresh();
        repository = context.getBean(AccountNoteRepository.class);
    }

    @AfterAll
    void stop() {
        context.close();
        pool.close();
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private JdbcFenceStore store() {
        return context.getBean(JdbcFenceStore.class);
    }

    private double checks(String outcome) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks")
                .tag("resource", "account-notes").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void crudSaveIsFencedAndTheZombieIsRejected() {
        FencingToken t34 = new FencingToken("account-notes:a1", 34, "client-2");
        FencingToken t33 = new FencingToken("account-notes:a1", 33, "client-1");
        FencingContext.run(t34, () -> repository.save(new AccountNote("a1", 34, "X")));
        assertThatThrownBy(() -> FencingContext.run(t33, () -> repository.save(new AccountNote("a1", 33, "Y"))))
                .isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> repository.save(new AccountNote("a1", 0, "no token")))
                .isInstanceOf(MissingTokenException.class);
        assertThat(repository.findByAccountOrderById("a1")).extracting(n -> n.text).containsExactly("X");
    }

    @Test
    void queryMethodIsFencedAndTheZombieIsRejected() {
        FencingContext.run(new FencingToken("account-notes:a2", 1, "c1"), () ->
                repository.save(new AccountNote("a2", 1, "v1")));
        FencingToken t34 = new FencingToken("account-notes:a2", 34, "client-2");
        FencingToken t33 = new FencingToken("account-notes:a2", 33, "client-1");
        FencingContext.run(t34, () -> assertThat(repository.rewrite("a2", "X", 34)).isEqualTo(1));
        assertThatThrownBy(() -> FencingContext.run(t33, () -> repository.rewrite("a2", "Y", 33)))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                    assertThat(e.maxSeen()).isEqualTo(34);
                    assertThat(e.operation()).contains("rewrite(String, String, long)");
                });
        assertThat(repository.findByAccountOrderById("a2")).extracting(n -> n.text).containsExactly("X");
        assertThat(new JdbcFenceAdmin(store()).maxSeen("account-notes:a2")).hasValue(34);
    }

    @Test
    void derivedQueryMethodIsFencedAndTheZombieIsRejected() {
        FencingContext.run(new FencingToken("account-notes:a3", 10, "c1"), () ->
                repository.save(new AccountNote("a3", 10, "keep")));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("account-notes:a3", 9, "zombie"),
                () -> repository.deleteByAccount("a3"))).isInstanceOf(StaleTokenException.class);
        assertThat(repository.findByAccountOrderById("a3")).hasSize(1);
        FencingContext.run(new FencingToken("account-notes:a3", 11, "c2"),
                () -> assertThat(repository.deleteByAccount("a3")).isEqualTo(1));
        assertThat(repository.findByAccountOrderById("a3")).isEmpty();
    }

    @Test
    void theCheckSharesTheRepositoryTransaction() {
        // the write fails (text too long for its column): the transaction rolls back, and max_seen with it
        FencingContext.run(new FencingToken("account-notes:a4", 5, "c1"), () ->
                repository.save(new AccountNote("a4", 5, "ok")));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("account-notes:a4", 6, "c2"),
                () -> repository.rewrite("a4", "far too long for sixteen", 6)))
                .isInstanceOf(DataIntegrityViolationException.class);
        assertThat(new JdbcFenceAdmin(store()).maxSeen("account-notes:a4")).hasValue(5);
        assertThat(checks("accepted")).isPositive();
    }
}
