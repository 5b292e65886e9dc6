package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import javax.sql.DataSource;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Forgetting {@code @EnableFencing} in a context that has a fence store and {@code @Fenced} beans would let every
 * fenced write run unchecked: startup fails instead, naming a fenced method and the fix.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnguardedStoreTest {

    private HikariDataSource pool;
    private String table;

    @BeforeAll
    void start() {
        pool = Database.H2.newPool(4);
        table = Database.uniqueTable("fence");
    }

    @AfterAll
    void stop() {
        new JdbcTemplate(pool).execute("DROP TABLE IF EXISTS " + table);
        new JdbcTemplate(pool).execute("DROP TABLE IF EXISTS " + table + "_lease");
        pool.close();
    }

    @Test
    void fencedBeansWithoutEnableFencingFailStartupNamingTheMethod() {
        assertThatThrownBy(() -> start(StoreConfig.class, Repository.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repository.write(..)")
                .hasMessageContaining("Add @EnableFencing");
    }

    /** No fence store either, only an issuer: nothing would lock or check, and the issuer says so. */
    @Test
    void fencedBeansWithOnlyAnIssuerAndNoEnableFencingFailStartup() {
        assertThatThrownBy(() -> start(IssuerConfig.class, Repository.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repository.write(..)")
                .hasMessageContaining("JdbcTokenIssuer")
                .hasMessageContaining("Add @EnableFencing");
    }

    /**
     * The issuer's check recognises @EnableFencing (here with an in-memory store, which is no bean, in an application
     * that says it runs as one instance).
     */
    @Test
    void anIssuerWithEnableFencingStarts() {
        try (AnnotationConfigApplicationContext context = start(Map.of(
                "fencing.store.in-memory.single-instance", "true"), IssuerConfig.class, Repository.class,
                EnabledInMemory.class)) {
            assertThat(context.getBean(JdbcTokenIssuer.class)).isNotNull();
        }
    }

    /**
     * The lease table's locks beside the in-memory store of allowInMemoryStore, in an application that may run as
     * several instances: each would check writes against its own max_seen.
     */
    @Test
    void theLeaseBesideTheInMemoryFallbackFailsStartup() {
        assertThatThrownBy(() -> start(IssuerConfig.class, Repository.class, EnabledInMemory.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("@EnableFencing(allowInMemoryStore = true)")
                .hasMessageContaining(JdbcTokenIssuer.class.getName())
                .hasMessageContaining("fencing.store.in-memory.single-instance=true");
    }

    @Test
    void withEnableFencingTheSameBeansStart() {
        try (AnnotationConfigApplicationContext context = start(StoreConfig.class, Repository.class, Enabled.class)) {
            assertThat(context.getBean(Repository.class)).isNotNull();
        }
    }

    /**
     * The failure comes once every singleton exists, before any lifecycle bean starts: a listener container with a
     * backlog (here a bean writing through the repository when started) writes nothing unchecked first, which a
     * check on the refresh event, published after the lifecycle beans started, let through.
     */
    @Test
    void theFailureComesBeforeAnyLifecycleBeanStarts() {
        Repository.writes.set(0);
        assertThatThrownBy(() -> start(StoreConfig.class, Repository.class, BacklogConsumer.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repository.write(..)");
        assertThatThrownBy(() -> start(IssuerConfig.class, Repository.class, BacklogConsumer.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("JdbcTokenIssuer");
        assertThat(Repository.writes).as("writes made unchecked before startup failed").hasValue(0);
    }

    @Test
    void aStoreUsedDirectlyWithoutFencedBeansStarts() {
        try (AnnotationConfigApplicationContext context = start(StoreConfig.class)) {
            assertThat(context.getBean(JdbcFenceStore.class).table()).isEqualTo(table);
        }
    }

    private AnnotationConfigApplicationContext start(Class<?>... classes) {
        return start(Map.of(), classes);
    }

    private AnnotationConfigApplicationContext start(Map<String, Object> properties, Class<?>... classes) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
        context.registerBean(DataSource.class, () -> new DelegatingDataSource(pool)); // not closed with the context
        context.registerBean("fenceTable", String.class, () -> table);
        context.register(classes);
        context.refresh();
        return context;
    }

    @Configuration(proxyBeanMethods = false)
    static class StoreConfig {
        @Bean
        JdbcFenceStore fenceStore(DataSource dataSource, String fenceTable) {
            return JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    @Import(StoreConfig.class)
    static class Enabled {
    }

    @Configuration(proxyBeanMethods = false)
    static class IssuerConfig {
        @Bean
        JdbcTokenIssuer tokenIssuer(DataSource dataSource, String fenceTable) {
            return JdbcTokenIssuer.builder(dataSource).table(fenceTable + "_lease").createTableIfMissing(true).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencing(allowInMemoryStore = true)
    static class EnabledInMemory {
    }

    static class Repository {
        static final AtomicInteger writes = new AtomicInteger();

        @Fenced(resource = "notes", key = "#id")
        public void write(long id) {
            writes.incrementAndGet();
        }
    }

    /** Stands for a message listener container that consumes a queue's backlog as soon as it is started. */
    static class BacklogConsumer implements SmartLifecycle {
        private final Repository repository;
        private volatile boolean running;

        BacklogConsumer(Repository repository) {
            this.repository = repository;
        }

        @Override
        public void start() {
            running = true;
            repository.write(1);
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
