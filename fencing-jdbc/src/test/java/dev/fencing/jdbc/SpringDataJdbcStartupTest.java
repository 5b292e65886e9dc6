package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.MissingTokenException;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;
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
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Spring Data JDBC repositories (a {@code FactoryBean} whose product is a JDK proxy of the repository interface) on
 * PostgreSQL: a key naming no parameter fails startup, naming the interface method, instead of failing every call;
 * and errors of a valid repository name the interface method, never {@code $ProxyNN}. Works in a schema of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringDataJdbcStartupTest {

    @Table("startup_note")
    static class Note {
        @Id
        Long id;
        String account;
        String text;
    }

    interface TypoNoteRepository extends CrudRepository<Note, Long> {
        @Fenced(resource = "startup-notes", key = "#acount")
        @Modifying
        @Query("UPDATE startup_note SET text = :text WHERE account = :account")
        int rewrite(String account, String text);
    }

    interface NoteRepository extends CrudRepository<Note, Long> {
        @Fenced(resource = "startup-notes", key = "#account")
        @Modifying
        @Query("UPDATE startup_note SET text = :text WHERE account = :account")
        int rewrite(String account, String text);
    }

    /** Everything but the repositories: each configuration below enables its own. */
    abstract static class Base extends AbstractJdbcConfiguration {
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
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcStartupTest.class,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = TypoNoteRepository.class))
    @EnableFencing
    static class TypoConfig extends Base {
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcStartupTest.class,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = NoteRepository.class))
    @EnableFencing
    static class ValidConfig extends Base {
    }

    private final String schema = "fencing_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private HikariDataSource pool;

    @BeforeAll
    void start() {
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("CREATE SCHEMA " + schema);
        }
        pool = Database.postgresInSchema(2, schema);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        jdbc.execute(JdbcDialect.POSTGRESQL.createTableSql(JdbcFenceStore.DEFAULT_TABLE));
        jdbc.execute("CREATE TABLE startup_note (id BIGSERIAL PRIMARY KEY, account VARCHAR(64) NOT NULL, "
                + "text VARCHAR(16) NOT NULL)");
    }

    @AfterAll
    void stop() {
        pool.close();
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private AnnotationConfigApplicationContext context(Class<?> config) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        // not the pool itself: closing a context would close it
        context.registerBean(DataSource.class, () -> new DelegatingDataSource(pool));
        context.register(config);
        context.refresh();
        return context;
    }

    @Test
    void aRepositoryKeyNamingNoParameterFailsStartup() {
        assertThatThrownBy(() -> context(TypoConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypoNoteRepository.rewrite(String, String)")
                .hasMessageContaining("#acount is not a parameter")
                .hasMessageNotContaining("$Proxy");
    }

    @Test
    void errorsOfARepositoryNameTheInterfaceMethod() {
        try (AnnotationConfigApplicationContext context = context(ValidConfig.class)) {
            NoteRepository repository = context.getBean(NoteRepository.class);
            assertThat(AopUtils.isJdkDynamicProxy(repository)).isTrue();
            assertThatThrownBy(() -> repository.rewrite("a1", "x"))
                    .isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("NoteRepository.rewrite(String, String)")
                    .hasMessageNotContaining("$Proxy");
        }
    }
}
