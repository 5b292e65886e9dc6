package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import java.util.Locale;
import javax.sql.DataSource;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * {@code fencing.store.jdbc.initialize-schema} and {@code fencing.issuer.jdbc.initialize-schema}: Boot's
 * {@code DatabaseInitializationMode} semantics (embedded by default, always, never), and ordered after the
 * application's own initializers (spring.sql.init, Flyway), so a table they create is the one the store uses.
 */
class FencingSchemaInitializationTest {

    private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10)
            .toLowerCase(Locale.ROOT);
    private final String fenceTable = "fit_init_fence_" + suffix;
    private final String leaseTable = "fit_init_lease_" + suffix;
    private final String flywayTable = "fit_init_flyway_" + suffix;

    private final ApplicationContextRunner database = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
                    DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class, DataSourceInitializationAutoConfiguration.class,
                    FlywayAutoConfiguration.class))
            .withPropertyValues("spring.flyway.enabled=false");

    private ApplicationContextRunner postgres() {
        return database.withPropertyValues("spring.datasource.url=" + POSTGRES,
                "fencing.store.jdbc.table=" + fenceTable, "fencing.issuer.jdbc.table=" + leaseTable);
    }

    @AfterEach
    void dropTables() {
        JdbcTemplate jdbc = new JdbcTemplate(new SingleConnectionDataSource(POSTGRES, true));
        for (String table : new String[] {fenceTable, leaseTable, flywayTable}) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void embeddedIsTheDefaultAndCreatesBothTablesOnAnInMemoryDatabase() {
        database.withPropertyValues("spring.datasource.url=jdbc:h2:mem:init-embedded;DB_CLOSE_DELAY=-1",
                "fencing.issuer.type=jdbc").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class)
                            .hasSingleBean(JdbcTokenIssuer.class);
                    JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
                    assertThat(tableExists(jdbc, "FENCING_MAX_SEEN")).isTrue();
                    assertThat(tableExists(jdbc, "FENCING_LEASE")).isTrue();
                });
    }

    @Test
    void neverLeavesAMissingTableMissingAndTheFailureSaysWhichPropertyCreatesIt() {
        database.withPropertyValues("spring.datasource.url=jdbc:h2:mem:init-never;DB_CLOSE_DELAY=-1",
                "fencing.store.jdbc.initialize-schema=never").run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("fencing_max_seen")
                            .contains("classpath:dev/fencing/jdbc/schema-h2.sql");
                    assertThat(analysis.getAction()).contains("fencing.store.jdbc.initialize-schema=always");
                });
        database.withPropertyValues("spring.datasource.url=jdbc:h2:mem:init-never-lease;DB_CLOSE_DELAY=-1",
                "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.initialize-schema=never").run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getAction()).contains("fencing.issuer.jdbc.initialize-schema=always");
                });
    }

    @Test
    void embeddedDoesNotTouchAServerDatabase() {
        postgres().run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(fenceTable);
            assertThat(tableExists(new JdbcTemplate(new SingleConnectionDataSource(POSTGRES, true)), fenceTable))
                    .isFalse();
        });
    }

    @Test
    void alwaysCreatesBothTablesOnPostgresql() {
        postgres().withPropertyValues("fencing.store.jdbc.initialize-schema=always", "fencing.issuer.type=jdbc",
                "fencing.issuer.jdbc.initialize-schema=always").run(context -> {
                    assertThat(context).hasNotFailed();
                    JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
                    assertThat(tableExists(jdbc, fenceTable)).isTrue();
                    assertThat(tableExists(jdbc, leaseTable)).isTrue();
                });
    }

    @Test
    void alwaysRunsAfterFlywaySoTheMigrationOwnsTheTable() {
        // the migration has no IF NOT EXISTS: had the starter created the table first, Flyway would fail
        postgres().withPropertyValues("spring.flyway.enabled=true", "fencing.store.jdbc.initialize-schema=always",
                "spring.flyway.locations=classpath:db/fencing-schema-it", "spring.flyway.table=" + flywayTable,
                "spring.flyway.baseline-on-migrate=true", "spring.flyway.baseline-version=0",
                "spring.flyway.placeholders.fence_table=" + fenceTable).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
                    assertThat(columnExists(new JdbcTemplate(context.getBean(DataSource.class)), fenceTable,
                            "made_by_flyway"))
                            .isTrue();
                });
    }

    @Test
    void alwaysRunsAfterSpringSqlInitSoItsScriptOwnsTheTable() {
        database.withPropertyValues("spring.datasource.url=jdbc:h2:mem:init-sqlinit;DB_CLOSE_DELAY=-1",
                "spring.sql.init.schema-locations=classpath:db/fencing-schema-it/h2-schema.sql",
                "fencing.store.jdbc.table=sql_init_fence", "fencing.store.jdbc.initialize-schema=always")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
                    assertThat(columnExists(new JdbcTemplate(context.getBean(DataSource.class)), "SQL_INIT_FENCE",
                            "MADE_BY_SQL_INIT")).isTrue();
                });
    }

    private static boolean tableExists(JdbcTemplate jdbc, String table) {
        Integer count = jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = ?",
                Integer.class, table);
        return count != null && count > 0;
    }

    private static boolean columnExists(JdbcTemplate jdbc, String table, String column) {
        Integer count = jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.columns "
                + "WHERE table_name = ? AND column_name = ?", Integer.class, table, column);
        return count != null && count > 0;
    }
}
