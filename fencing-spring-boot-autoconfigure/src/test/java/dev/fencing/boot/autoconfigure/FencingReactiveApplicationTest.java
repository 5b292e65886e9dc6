package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.boot.actuate.FencingAdminWebExtension;
import dev.fencing.boot.actuate.FencingEndpoint;
import dev.fencing.boot.actuate.FencingHealthIndicator;
import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcInitializationAutoConfiguration;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A reactive application as the starter sees it: R2DBC on the real PostgreSQL and no {@code DataSource}. Its reactive
 * {@code @Fenced} methods are checked by the auto-configured {@code R2dbcFenceStore} in Boot's reactive transactions,
 * with no blocking store; its fence table is verified at startup; a blocking {@code @Fenced} method beside them, or a
 * reactive one without any reactive store, fails startup saying what to add.
 */
@ExtendWith(OutputCaptureExtension.class)
class FencingReactiveApplicationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final String TABLE = "boot_rx_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static final DatabaseClient SQL =
            DatabaseClient.create(ConnectionFactories.get("r2dbc:postgresql://postgres@127.0.0.1:5432/test"));

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
                    FencingR2dbcAutoConfiguration.class, R2dbcAutoConfiguration.class,
                    R2dbcTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
            .withPropertyValues("spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:5432/test",
                    "spring.r2dbc.username=postgres", "fencing.store.r2dbc.table=" + TABLE);

    @BeforeAll
    static void createTable() {
        SQL.sql(FenceSql.POSTGRESQL.createTableSql(TABLE)).then().block(TIMEOUT);
        SQL.sql(FenceSql.POSTGRESQL.createTableSql(TABLE + "_other")).then().block(TIMEOUT);
    }

    @AfterAll
    static void dropTable() {
        SQL.sql("DROP TABLE IF EXISTS " + TABLE).then().block(TIMEOUT);
        SQL.sql("DROP TABLE IF EXISTS " + TABLE + "_other").then().block(TIMEOUT);
    }

    public static class ReactiveLedger {
        @Fenced(resource = "ledger", key = "#id")
        @Transactional
        public Mono<String> post(long id) {
            return Mono.just("posted " + id);
        }
    }

    public static class BlockingLedger {
        @Fenced(resource = "ledger")
        public String post() {
            return "posted";
        }
    }

    private static Mono<String> post(ReactiveLedger ledger, long id, long token) {
        return ledger.post(id).contextWrite(ReactiveFencing.bind(new FencingToken("ledger:" + id, token, "a")));
    }

    @Test
    void reactiveMethodsAreCheckedInBootsReactiveTransactionsWithoutABlockingStore() {
        runner.withBean(ReactiveLedger.class).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(FenceStore.class).hasSingleBean(R2dbcFenceStore.class);
            ReactiveLedger ledger = context.getBean(ReactiveLedger.class);
            long id = System.nanoTime();
            StepVerifier.create(post(ledger, id, 5)).expectNext("posted " + id).expectComplete().verify(TIMEOUT);
            StepVerifier.create(post(ledger, id, 4)).expectError(StaleTokenException.class).verify(TIMEOUT);
            assertThat(SQL.sql("SELECT max_seen FROM " + TABLE + " WHERE resource = :r").bind("r", "ledger:" + id)
                    .map(row -> row.get(0, Long.class)).one().block(TIMEOUT)).isEqualTo(5);
        });
    }

    /**
     * The actuator in a reactive application (no blocking store): the health component reads the R2DBC table live
     * (DOWN once it is gone), and the endpoint shows the store, the counts, the recent rejections and the modes, and
     * switches a mode; a new user's WebFlux application had neither.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theActuatorCoversAReactiveApplicationsStore() {
        String table = TABLE + "_act";
        SQL.sql(FenceSql.POSTGRESQL.createTableSql(table)).then().block(TIMEOUT);
        try {
            runner.withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(ReactiveLedger.class)
                    .withPropertyValues("fencing.store.r2dbc.table=" + table,
                            "management.endpoints.web.exposure.include=health,fencing")
                    .run(context -> {
                        assertThat(context).hasNotFailed().doesNotHaveBean(FenceStore.class)
                                .hasSingleBean(FencingHealthIndicator.class).hasSingleBean(FencingEndpoint.class)
                                .doesNotHaveBean(FencingAdminWebExtension.class);
                        FencingHealthIndicator health = context.getBean(FencingHealthIndicator.class);
                        Health up = health.health();
                        assertThat(up.getStatus()).isEqualTo(Status.UP);
                        assertThat((Map<String, Object>) up.getDetails().get("store"))
                                .containsEntry("type", "R2dbcFenceStore").containsEntry("table", table)
                                .containsEntry("database", "POSTGRESQL");

                        ReactiveLedger ledger = context.getBean(ReactiveLedger.class);
                        long id = System.nanoTime();
                        StepVerifier.create(post(ledger, id, 5)).expectNextCount(1).expectComplete().verify(TIMEOUT);
                        StepVerifier.create(post(ledger, id, 4)).expectError(StaleTokenException.class)
                                .verify(TIMEOUT);
                        FencingEndpoint endpoint = context.getBean(FencingEndpoint.class);
                        Map<String, Object> all = endpoint.fencing();
                        assertThat((Map<String, Object>) all.get("store")).containsEntry("type", "R2dbcFenceStore");
                        assertThat(((Map<String, Map<String, Long>>) all.get("checks")).get("ledger"))
                                .containsEntry("accepted", 1L).containsEntry("stale", 1L);
                        assertThat((List<Object>) all.get("rejections")).hasSize(1);
                        assertThat(endpoint.resource("ledger:" + id)).containsEntry("countedAs", "ledger")
                                .doesNotContainKey("maxSeen");
                        assertThat(endpoint.switchMode("ledger", "enforce", null).getStatus()).isEqualTo(200);
                        assertThat(endpoint.switchMode("ledger", "observe", null).getStatus()).isEqualTo(400);

                        SQL.sql("DROP TABLE " + table).then().block(TIMEOUT);
                        Health down = health.health();
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        // the database's own words too: the table does not exist
                        assertThat((String) down.getDetails().get("error")).startsWith("fence store: ")
                                .contains(table).contains("does not exist");
                    });
        } finally {
            SQL.sql("DROP TABLE IF EXISTS " + table).then().block(TIMEOUT);
        }
    }

    /** The documented way to create the table without migrations: Boot's spring.sql.init runs on R2DBC first. */
    @Test
    void springSqlInitCreatesTheFenceTableBeforeTheStoreVerifiesIt(@TempDir Path directory) throws Exception {
        String table = TABLE + "_init";
        // the shipped script, with this run's table name
        Path script = Files.writeString(directory.resolve("fence.sql"),
                FenceSql.POSTGRESQL.createTableSql(table) + ";\n");
        try {
            runner.withConfiguration(AutoConfigurations.of(R2dbcInitializationAutoConfiguration.class))
                    .withBean(ReactiveLedger.class)
                    .withPropertyValues("fencing.store.r2dbc.table=" + table, "spring.sql.init.mode=always",
                            "spring.sql.init.schema-locations=" + script.toUri())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        long id = System.nanoTime();
                        StepVerifier.create(post(context.getBean(ReactiveLedger.class), id, 1))
                                .expectNext("posted " + id).expectComplete().verify(TIMEOUT);
                    });
        } finally {
            SQL.sql("DROP TABLE IF EXISTS " + table).then().block(TIMEOUT);
        }
    }

    /** The R2DBC store has no bound on one advance: the property alone bounded nothing, silently. */
    @Test
    void maxAdvanceWithTheReactiveStoreAloneFailsStartup() {
        runner.withBean(ReactiveLedger.class).withPropertyValues("fencing.store.jdbc.max-advance=5").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("fencing.store.jdbc.max-advance=5 is set, "
                    + "but the application's fence store is the R2DBC store");
        });
    }

    /** A reactive endpoint's mode switch to observe is an admin operation: unsecured, it failed only on servlet. */
    @Test
    void theAdminOperationsOfAReactiveApplicationNeedSpringSecurityOrTheAllowance() {
        ApplicationContextRunner admin = runner.withConfiguration(AutoConfigurations.of(
                        FencingActuatorAutoConfiguration.class)).withBean(ReactiveLedger.class)
                .withPropertyValues("fencing.admin.enabled=true", "management.endpoints.web.exposure.include=fencing");
        admin.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("Spring Security is not on the class path")
                    .hasMessageContaining("fencing.admin.allow-unsecured=true");
        });
        admin.withPropertyValues("fencing.admin.allow-unsecured=true").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(FencingEndpoint.class));
        // a read-only endpoint serves no write operation: nothing to secure (a re-trial's harmless setup failed)
        admin.withPropertyValues("management.endpoint.fencing.access=READ_ONLY").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(FencingEndpoint.class));
        admin.withPropertyValues("management.endpoints.access.max-permitted=READ_ONLY").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(FencingEndpoint.class));
    }

    @Test
    void aMissingFenceTableFailsStartupNamingIt() {
        runner.withBean(ReactiveLedger.class).withPropertyValues("fencing.store.r2dbc.table=" + TABLE + "_missing")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining(TABLE + "_missing")
                            .hasMessageContaining("schema-postgresql.sql")
                            // a new user read the missing table under "Invalid @Fenced configuration (PROXY mode)"
                            // as a problem of the proxies
                            .hasMessageStartingWith("Invalid fencing configuration (mode PROXY; the @Fenced methods, "
                                    + "the fence store, the issuer)")
                            .hasMessageNotContaining("@Fenced configuration");
                });
    }

    @Test
    void aBlockingFencedMethodBesideThemStillNeedsADatabaseStore() {
        runner.withBean(ReactiveLedger.class).withBean(BlockingLedger.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("BlockingLedger.post()")
                    .hasMessageContaining("spring.datasource.url");
        });
    }

    /**
     * Blocking and reactive methods beside each other check in the JDBC and the R2DBC store: on two tables, a
     * resource fenced by both kept two max_seen, and a new user's trial wrote a stale token through the reactive
     * one. The R2DBC store's table now follows the JDBC store's unless set, and two different tables fail startup.
     */
    @Test
    void theBlockingAndReactiveStoresShareOneTableOrStartupFails() {
        ApplicationContextRunner mixed = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingJdbcAutoConfiguration.class, FencingR2dbcAutoConfiguration.class,
                        R2dbcAutoConfiguration.class, R2dbcTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class))
                .withPropertyValues("spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:5432/test",
                        "spring.r2dbc.username=postgres")
                // Boot's DataSource backs off beside a ConnectionFactory: a mixed application defines its own
                .withBean(javax.sql.DataSource.class, () -> new org.springframework.jdbc.datasource
                        .DriverManagerDataSource("jdbc:postgresql://127.0.0.1:5432/test", "postgres", ""))
                .withBean(ReactiveLedger.class).withBean(KeyedBlockingLedger.class);
        mixed.withPropertyValues("fencing.store.jdbc.table=" + TABLE + "_other", "fencing.store.r2dbc.table=" + TABLE)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasMessageContaining("table '" + TABLE + "_other' (fencing.store.jdbc.table)")
                            .hasMessageContaining("table '" + TABLE + "' (fencing.store.r2dbc.table)");
                });
        mixed.withPropertyValues("fencing.store.jdbc.table=" + TABLE).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(R2dbcFenceStore.class).table()).as("follows the JDBC store's")
                    .isEqualTo(TABLE);
        });
        // one table name, two databases (a new user's re-trial: both verified, two max_seen per resource)
        org.springframework.jdbc.datasource.DriverManagerDataSource mariadb =
                new org.springframework.jdbc.datasource.DriverManagerDataSource("jdbc:mariadb://127.0.0.1:3306/test",
                        "root", "");
        try {
            mixed.withBean("mariadb", javax.sql.DataSource.class, () -> mariadb,
                            definition -> definition.setPrimary(true))
                    .withPropertyValues("fencing.store.jdbc.table=" + TABLE,
                            "fencing.store.jdbc.initialize-schema=always")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).hasMessageContaining("on MARIADB (spring.datasource.*)")
                                .hasMessageContaining("reactive ones on POSTGRESQL (spring.r2dbc.*)");
                    });
        } finally {
            new org.springframework.jdbc.core.JdbcTemplate(mariadb).execute("DROP TABLE IF EXISTS " + TABLE);
        }
    }

    public static class KeyedBlockingLedger {
        @Fenced(resource = "ledger", key = "#id")
        public String post(long id) {
            return "posted " + id;
        }
    }

    /** A fenced method with no transaction of its own: it runs in its caller's. */
    public static class FencedOnly {
        @Fenced(resource = "ledger", key = "#id")
        public Mono<String> post(long id) {
            return Mono.just("posted " + id);
        }
    }

    /** A method in a transaction of the second connection factory's manager, calling the fenced one. */
    public static class OtherDatabase {
        private final FencedOnly fenced;
        private final Primary primary;

        public OtherDatabase(FencedOnly fenced, Primary primary) {
            this.fenced = fenced;
            this.primary = primary;
        }

        @Transactional("otherTm")
        public Mono<String> post(long id) {
            return fenced.post(id);
        }

        @Transactional("otherTm")
        public Mono<String> postInAPrimaryTransaction(long id) {
            return primary.post(id);
        }
    }

    /** Methods in transactions of the store's (primary) manager. */
    public static class Primary {
        private final FencedOnly fenced;
        private final ObjectProvider<OtherDatabase> other;

        public Primary(FencedOnly fenced, ObjectProvider<OtherDatabase> other) {
            this.fenced = fenced;
            this.other = other;
        }

        @Transactional
        public Mono<String> post(long id) {
            return fenced.post(id);
        }

        @Transactional
        public Mono<String> postThroughTheOtherDatabase(long id) {
            return other.getObject().post(id);
        }
    }

    /**
     * Two reactive transaction managers, the store's primary: a {@code @Transactional("otherTm")} method nested in the
     * store's transaction that calls the fenced method is refused before the write (the check would run in the outer
     * transaction, the writes commit with the inner one), and so is the other way round, which the shared reactive
     * transaction context cannot tell from it; the store's transaction alone is checked.
     */
    @Test
    void twoManagersTransactionsNestedAroundAFencedCallAreRefusedThroughTransactional() {
        runner.withUserConfiguration(TwoManagers.class)
                .withBean(FencedOnly.class).withBean(Primary.class).withBean(OtherDatabase.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    long id = System.nanoTime();
                    StepVerifier.create(context.getBean(Primary.class).postThroughTheOtherDatabase(id)
                                    .contextWrite(ReactiveFencing.bind(new FencingToken("ledger:" + id, 1, "a"))))
                            .expectErrorSatisfies(e -> assertThat(e)
                                    .isInstanceOf(OutsideTransactionException.class)
                                    .hasMessageContaining("ledger:" + id).hasMessageContaining("beside the store's"))
                            .verify(TIMEOUT);
                    StepVerifier.create(context.getBean(OtherDatabase.class).postInAPrimaryTransaction(id)
                                    .contextWrite(ReactiveFencing.bind(new FencingToken("ledger:" + id, 2, "a"))))
                            .expectErrorSatisfies(e -> assertThat(e)
                                    .isInstanceOf(OutsideTransactionException.class)
                                    .hasMessageContaining("ledger:" + id).hasMessageContaining("beside the store's"))
                            .verify(TIMEOUT);
                    assertThat(SQL.sql("SELECT count(*) FROM " + TABLE + " WHERE resource = :r")
                            .bind("r", "ledger:" + id).map(row -> row.get(0, Long.class)).one().block(TIMEOUT))
                            .isZero();
                    StepVerifier.create(context.getBean(Primary.class).post(id)
                                    .contextWrite(ReactiveFencing.bind(new FencingToken("ledger:" + id, 2, "a"))))
                            .expectNext("posted " + id).expectComplete().verify(TIMEOUT);
                    assertThat(SQL.sql("SELECT max_seen FROM " + TABLE + " WHERE resource = :r")
                            .bind("r", "ledger:" + id).map(row -> row.get(0, Long.class)).one().block(TIMEOUT))
                            .isEqualTo(2);
                });
    }

    /**
     * Only another factory's manager declared: Boot's backs off, the store's factory has none, and every fenced call
     * would be refused; startup warns, naming the fix. Nothing is said in the usual application.
     */
    @Test
    void withoutAManagerOnTheStoresConnectionFactoryStartupWarns(CapturedOutput output) {
        String warning = "no R2dbcTransactionManager bean manages the ConnectionFactory";
        runner.withBean(ReactiveLedger.class).run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain(warning);
        runner.withBean(ReactiveLedger.class).withBean("otherTm", R2dbcTransactionManager.class,
                        () -> new R2dbcTransactionManager(
                                ConnectionFactories.get("r2dbc:postgresql://postgres@127.0.0.1:5432/test")))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains(warning).contains("Two connection factories");
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoManagers {
        @Bean
        @org.springframework.context.annotation.Primary
        R2dbcTransactionManager transactionManager(
                ConnectionFactory connectionFactory) {
            return new R2dbcTransactionManager(connectionFactory);
        }

        @Bean
        R2dbcTransactionManager otherTm() {
            return new R2dbcTransactionManager(
                    ConnectionFactories.get("r2dbc:postgresql://postgres@127.0.0.1:5432/test"));
        }
    }

    @Test
    void aReactiveMethodWithoutAReactiveStoreFailsStartupNamingFencingR2dbc() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingR2dbcAutoConfiguration.class))
                .withBean(ReactiveLedger.class).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("fencing-r2dbc")
                            .hasMessageContaining("spring.r2dbc.url");
                });
    }
}
