package dev.fencing.jdbc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
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
import org.slf4j.LoggerFactory;
import org.springframework.core.env.MapPropertySource;
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
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

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

    /** Fences one method only: its other write methods (CRUD's and a @Modifying query) are unfenced. */
    interface LedgerNoteRepository extends CrudRepository<Note, Long> {
        @Fenced(resource = "startup-ledger", key = "#account")
        @Modifying
        @Query("UPDATE startup_note SET text = :text WHERE account = :account")
        int rewrite(String account, String text);

        @Modifying
        @Query("DELETE FROM startup_note WHERE account = :account")
        int purge(String account);

        long countByAccount(String account);

        /** Writes without @Modifying: its statement says so. */
        @Query("update startup_note SET text = 'x' WHERE account = :account RETURNING id")
        List<Long> bump(String account);

        @Query("SELECT id FROM startup_note WHERE account = :account")
        List<Long> idsOf(String account);

        /** Runs on the repository itself: what it calls is not fenced either. */
        default void removeQuietly(Note note) {
            delete(note);
        }
    }

    /** Fenced as a whole: every method checks. */
    @Fenced(resource = "startup-archive")
    interface ArchiveNoteRepository extends CrudRepository<Note, Long> {
    }

    /**
     * Fenced methods with transactions of their own, which Spring Data's repository interceptor begins inside the
     * fence (a helper's trial: the check rolled back with the caller's transaction and the write stayed).
     */
    interface OwnTransactionNoteRepository extends CrudRepository<Note, Long> {
        @Fenced(resource = "startup-own", key = "#account")
        @Transactional(propagation = Propagation.REQUIRES_NEW)
        @Modifying
        @Query("UPDATE startup_note SET text = :text WHERE account = :account")
        int rewrite(String account, String text);

        @Fenced(resource = "startup-own", key = "#account")
        @Transactional(propagation = Propagation.NOT_SUPPORTED)
        @Modifying
        @Query("UPDATE startup_note SET text = :text WHERE account = :account")
        int rewriteAlone(String account, String text);

        /** Joins the fence's transaction: fine. */
        @Fenced(resource = "startup-own", key = "#account")
        @Transactional
        @Modifying
        @Query("DELETE FROM startup_note WHERE account = :account")
        int purge(String account);
    }

    /** Not fenced at all: nothing to say about it. */
    interface PlainNoteRepository extends CrudRepository<Note, Long> {
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
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE,
                    classes = TypoNoteRepository.class))
    @EnableFencing
    static class TypoConfig extends Base {
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcStartupTest.class,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = NoteRepository.class))
    @EnableFencing
    static class ValidConfig extends Base {
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcStartupTest.class,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = {
                    LedgerNoteRepository.class, ArchiveNoteRepository.class, PlainNoteRepository.class}))
    @EnableFencing
    static class PartlyFencedConfig extends Base {
    }

    @Configuration
    @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = SpringDataJdbcStartupTest.class,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE,
                    classes = OwnTransactionNoteRepository.class))
    @EnableFencing
    static class OwnTransactionConfig extends Base {
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
        return context(config, Map.of());
    }

    private AnnotationConfigApplicationContext context(Class<?> config, Map<String, Object> properties) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
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
    void aRepositoryMethodWithATransactionOfItsOwnInsideTheFenceFailsStartup() {
        assertThatThrownBy(() -> context(OwnTransactionConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("OwnTransactionNoteRepository.rewrite(String, String) is @Fenced")
                .hasMessageContaining("propagation REQUIRES_NEW")
                .hasMessageContaining("OwnTransactionNoteRepository.rewriteAlone(String, String) is @Fenced")
                .hasMessageContaining("propagation NOT_SUPPORTED")
                .hasMessageNotContaining("purge");
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

    /**
     * A repository that fences one method and leaves its other write methods (CRUD's, a {@code @Modifying} query)
     * unfenced is named in one startup warning listing them; reads, a repository fenced as a whole and one not
     * fenced at all are not.
     */
    @Test
    void unfencedWriteMethodsOfAFencedRepositoryAreNamedAtStartup() {
        List<ILoggingEvent> events = logged(properties -> context(PartlyFencedConfig.class, properties), Map.of());
        assertThat(events).singleElement().satisfies(event -> {
                assertThat(event.getLevel()).isEqualTo(Level.WARN);
                assertThat(event.getFormattedMessage())
                        .startsWith("SpringDataJdbcStartupTest.LedgerNoteRepository fences [rewrite] with @Fenced "
                                + "but not its write methods [bump, delete, deleteAll(), deleteAll(Iterable), "
                                + "deleteAllById, deleteById, purge, removeQuietly, save, saveAll]")
                        .contains("fencing.allowed-unfenced-writes (SpringDataJdbcStartupTest.LedgerNoteRepository"
                                + ".bump, by name for all its overloads")
                        .doesNotContain("countByAccount", "findAll", "idsOf", "ArchiveNoteRepository",
                                "PlainNoteRepository");
        });
    }

    /** Listed methods, by simple, short or qualified name, or the whole repository, are left out of the warning. */
    @Test
    void allowedUnfencedWritesAreLeftOut() {
        assertThat(logged(properties -> context(PartlyFencedConfig.class, properties),
                Map.of("fencing.allowed-unfenced-writes", "LedgerNoteRepository.saveAll, "
                        + "SpringDataJdbcStartupTest.LedgerNoteRepository.purge,"
                        + LedgerNoteRepository.class.getName() + ".deleteAll, LedgerNoteRepository.bump,"
                        + "LedgerNoteRepository.removeQuietly")))
                .singleElement().satisfies(event -> assertThat(event.getFormattedMessage())
                        .contains("not its write methods [delete, deleteAllById, deleteById, save]"));
        // the whole repository allowed; an entry for a repository this context lacks is only an INFO line
        assertThat(logged(properties -> context(PartlyFencedConfig.class, properties),
                Map.of("fencing.allowed-unfenced-writes[0]", "LedgerNoteRepository",
                        "fencing.allowed-unfenced-writes[1]", "AuditRepository.deleteAll",
                        // redundant beside the repository's own entry, and no problem
                        "fencing.allowed-unfenced-writes[2]", "LedgerNoteRepository.saveAll")))
                .singleElement().satisfies(event -> {
                    assertThat(event.getLevel()).isEqualTo(Level.INFO);
                    assertThat(event.getFormattedMessage()).contains("'AuditRepository.deleteAll'");
                });
        // a repository fenced as a whole allows nothing: said, since it would hide a write method added later
        assertThat(logged(properties -> context(PartlyFencedConfig.class, properties),
                Map.of("fencing.allowed-unfenced-writes", "LedgerNoteRepository, ArchiveNoteRepository")))
                .singleElement().satisfies(event -> {
                    assertThat(event.getLevel()).isEqualTo(Level.INFO);
                    assertThat(event.getFormattedMessage()).contains("lists 'ArchiveNoteRepository', a repository "
                            + "whose write methods are all fenced now");
                });
    }

    /**
     * What the repository check logs while {@code start} starts (and then closes) a context with {@code properties}.
     */
    private static List<ILoggingEvent> logged(Function<Map<String, Object>, AnnotationConfigApplicationContext> start,
                                              Map<String, Object> properties) {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.fencing.spring.support.UnfencedRepositoryWrites");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        Level level = logger.getLevel();
        logger.setLevel(Level.INFO);
        logger.addAppender(appender);
        try (AnnotationConfigApplicationContext context = start.apply(properties)) {
            assertThat(context.getBean(LedgerNoteRepository.class)).isNotNull();
        } finally {
            logger.detachAppender(appender);
            logger.setLevel(level);
        }
        return appender.list;
    }

    /** An entry naming a fenced method, or misspelling a write method, of a fenced repository fails startup. */
    @Test
    void anAllowedEntryNamingNoUnfencedWriteFailsStartup() {
        for (String entry : new String[] {"LedgerNoteRepository.rewrite", "LedgerNoteRepository.saveAl"}) {
            assertThatThrownBy(() -> context(PartlyFencedConfig.class,
                    Map.of("fencing.allowed-unfenced-writes", entry)).close())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.allowed-unfenced-writes lists '" + entry + "', which is not an "
                            + "unfenced write method of LedgerNoteRepository (those are [bump, delete, deleteAll, "
                            + "deleteAllById, deleteById, purge, removeQuietly, save, saveAll])");
        }
    }
}
