package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A real Spring Boot 4 application on PostgreSQL whose own database initialization creates the fence table
 * ({@code schema.sql} through {@code spring.sql.init}, or a Flyway migration): the store checks the table once the
 * context is complete, after that initialization, so the application starts and fences. Without the table, startup
 * fails with the message that says what to do.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class BootStartupTest {

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {
        @Bean
        JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager,
                                  Environment environment) {
            return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager)
                    .table(environment.getRequiredProperty("test.fence-table")).build();
        }
    }

    @TempDir
    Path dir;

    private final List<String> cleanup = new ArrayList<>();
    private JdbcTemplate admin;

    @BeforeAll
    void connect() {
        admin = new JdbcTemplate(new DriverManagerDataSource(Database.POSTGRESQL.url, Database.POSTGRESQL.user, ""));
    }

    @AfterAll
    void dropAll() {
        cleanup.forEach(admin::execute);
    }

    /** The README's DDL (the script shipped in the jar) for {@code table}. */
    private static String readmeDdl(String table) throws IOException {
        try (InputStream in = BootStartupTest.class.getClassLoader()
                .getResourceAsStream(JdbcDialect.POSTGRESQL.schemaResource())) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .replace(JdbcFenceStore.DEFAULT_TABLE, table);
        }
    }

    private static ConfigurableApplicationContext start(String... properties) {
        List<String> all = new ArrayList<>(List.of(
                "spring.datasource.url=" + Database.POSTGRESQL.url,
                "spring.datasource.username=" + Database.POSTGRESQL.user,
                "spring.datasource.password=",
                "spring.main.banner-mode=off"));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties(all.toArray(String[]::new)).run();
    }

    private static void fencedWriteWorks(ConfigurableApplicationContext context) throws Throwable {
        JdbcFenceStore store = context.getBean(JdbcFenceStore.class);
        String r = "boot-" + System.nanoTime();
        assertThat(store.fence(r, new FencingToken(r, 5, "boot"), () -> "written")).isEqualTo("written");
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(5);
    }

    @Test
    void schemaSqlThroughSpringSqlInitCreatesTheTableBeforeTheCheck() throws Throwable {
        String table = Database.uniqueTable("boot_init");
        cleanup.add("DROP TABLE IF EXISTS " + table);
        Path schema = Files.writeString(dir.resolve("schema.sql"), readmeDdl(table));
        try (ConfigurableApplicationContext context = start("test.fence-table=" + table,
                "spring.sql.init.mode=always", "spring.sql.init.schema-locations=file:" + schema,
                "spring.flyway.enabled=false")) {
            fencedWriteWorks(context);
        }
    }

    @Test
    void aFlywayMigrationCreatesTheTableBeforeTheCheck() throws Throwable {
        String schema = Database.uniqueTable("boot_flyway");
        String table = schema + ".fencing_max_seen";
        cleanup.add("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        Path migrations = Files.createDirectories(dir.resolve("migrations"));
        Files.writeString(migrations.resolve("V1__fence_table.sql"), readmeDdl(table));
        try (ConfigurableApplicationContext context = start("test.fence-table=" + table,
                "spring.flyway.locations=filesystem:" + migrations, "spring.flyway.schemas=" + schema,
                "spring.flyway.create-schemas=true")) {
            assertThat(admin.queryForObject("SELECT COUNT(*) FROM " + schema + ".flyway_schema_history "
                    + "WHERE version = '1' AND success", Long.class)).isEqualTo(1);
            fencedWriteWorks(context);
        }
    }

    @Test
    void withoutTheTableTheApplicationDoesNotStartAndSaysWhatToDo() {
        String table = Database.uniqueTable("boot_absent");
        Throwable failure = catchThrowable(() -> start("test.fence-table=" + table, "spring.flyway.enabled=false")
                .close());
        FencingConfigurationException cause = null;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof FencingConfigurationException e) {
                cause = e;
            }
        }
        assertThat(cause).as("startup failure " + failure).isNotNull();
        assertThat(cause).hasMessageContaining(table).hasMessageContaining("missing or unusable")
                .hasMessageContaining("classpath:dev/fencing/jdbc/schema-postgresql.sql");
    }
}
