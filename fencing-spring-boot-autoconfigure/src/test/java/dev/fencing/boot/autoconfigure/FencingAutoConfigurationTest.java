package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.aspectj.annotation.AnnotationAwareAspectJAutoProxyCreator;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** Each condition and property of the auto-configurations, on ApplicationContextRunner contexts. */
class FencingAutoConfigurationTest {

    static final AutoConfigurations FENCING = AutoConfigurations.of(FencingAutoConfiguration.class,
            FencingJdbcAutoConfiguration.class, FencingWebAutoConfiguration.class);

    /** An H2 database with the default fence and lease tables (the scripts fencing-jdbc ships). */
    static String h2(String name) {
        return "spring.datasource.url=jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;INIT=RUNSCRIPT FROM "
                + "'classpath:dev/fencing/jdbc/schema-h2.sql'\\;RUNSCRIPT FROM "
                + "'classpath:dev/fencing/jdbc/lease-h2.sql'";
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FENCING)
            .withUserConfiguration(LedgerConfig.class);

    private final ApplicationContextRunner database = runner.withConfiguration(AutoConfigurations.of(
            DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
            TransactionAutoConfiguration.class));

    public static class Ledger {
        @Fenced(resource = "ledger")
        public String post() {
            return "posted";
        }
    }

    public static class AcquiringLedger {
        @Fenced(resource = "ledger", acquire = true)
        public String post() {
            return "posted";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LedgerConfig {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Test
    void fencingIsOnByDefaultWithoutEnableFencing() {
        runner.withPropertyValues("fencing.store.type=in-memory").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(InMemoryFenceStore.class);
            assertThat(fencingAdvisors(context)).as("the checking and the acquiring points' advisors").hasSize(2);
            Ledger ledger = context.getBean(Ledger.class);
            assertThat(AopUtils.isAopProxy(ledger)).isTrue();
            assertThatThrownBy(ledger::post).isInstanceOf(MissingTokenException.class);
            assertThat(FencingContext.call(new FencingToken("ledger", 1, "a"), ledger::post)).isEqualTo("posted");
            assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 1, "b"), ledger::post))
                    .isInstanceOf(dev.fencing.rule.TokenRejectedException.class);
        });
    }

    @Test
    void fencingEnabledFalseTurnsEverythingOff() {
        runner.withPropertyValues("fencing.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(FenceStore.class)
                    .doesNotHaveBean(FencingConfigurer.class).doesNotHaveBean(FencingProperties.class);
            assertThat(fencingAdvisors(context)).isEmpty();
            assertThat(AopUtils.isAopProxy(context.getBean(Ledger.class))).isFalse();
        });
        database.withPropertyValues("fencing.enabled=false", h2("off")).run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FenceStore.class));
    }

    @EnableFencing
    @Configuration(proxyBeanMethods = false)
    static class UserEnabledWithoutStore {
    }

    @Test
    void fencingEnabledFalseBesideTheApplicationsOwnEnableFencingFailsNamingTheProperty() {
        runner.withUserConfiguration(UserEnabledWithoutStore.class).withPropertyValues("fencing.enabled=false")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("fencing.enabled=false turned")
                            .hasStackTraceContaining("found no FenceStore bean");
                });
        runner.withUserConfiguration(UserEnabledWithoutStore.class).withPropertyValues("fencing.store.type=in-memory")
                .run(context -> assertThat(context).as("the starter's store").hasNotFailed());
    }

    @Test
    void withoutDataSourceOrInMemoryStartupFailsSayingWhatToAdd() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .hasMessageContaining("no DataSource bean")
                    .hasMessageContaining("spring.datasource.url")
                    .hasMessageContaining("fencing.store.type=in-memory")
                    .hasMessageContaining("fencing.enabled=false");
        });
    }

    @Test
    void theMessageWithoutFencingJdbcNamesTheDependency() {
        assertThat(FencingAutoConfiguration.PropertiesConfigurer.missingStoreMessage(false, false))
                .contains("dev.fencing:fencing-jdbc").contains("fencing-jdbc is not on the classpath");
    }

    /**
     * With an R2DBC ConnectionFactory Spring Boot creates no DataSource, even with spring.datasource.url set: a new
     * user's trial set it, as the message said, and got the same message again. The message and the Action say to
     * declare the DataSource bean instead.
     */
    @Test
    void withAnR2dbcConnectionFactoryTheMessageSaysBootCreatesNoDataSource() {
        String message = FencingAutoConfiguration.PropertiesConfigurer.missingStoreMessage(true, true, true);
        assertThat(message).contains("Spring Boot creates none while an R2DBC ConnectionFactory is defined")
                .contains("DataSourceBuilder").doesNotContain("add a database (spring.datasource.url");
        assertThat(FencingFailureAnalyzer.action(message)).contains("a DataSource bean of your own")
                .doesNotContain("a database (spring.datasource.url");
    }

    /** A WebFlux application's methods are likely all reactive: the reactive store's fix comes first. */
    @Test
    void withReactorTheReactiveStoresFixComesFirst() {
        String reactive = FencingAutoConfiguration.PropertiesConfigurer.missingStoreMessage(true, true);
        assertThat(reactive.indexOf("dev.fencing:fencing-r2dbc")).isPositive()
                .isLessThan(reactive.indexOf("spring.datasource.url"));
        String blocking = FencingAutoConfiguration.PropertiesConfigurer.missingStoreMessage(true, false);
        assertThat(blocking.indexOf("spring.datasource.url")).isPositive()
                .isLessThan(blocking.indexOf("dev.fencing:fencing-r2dbc"));
        assertThat(FencingFailureAnalyzer.action(reactive)).startsWith("Give fencing a shared store: for methods "
                + "returning a Mono or Flux, fencing-r2dbc");
        assertThat(FencingFailureAnalyzer.action(blocking)).startsWith("Give fencing a shared store: a database");
    }

    @Test
    void inMemoryStoreIsAnOptIn() {
        database.withPropertyValues(h2("inmemory"), "fencing.store.type=in-memory").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(FenceStore.class)
                        .getBean(FenceStore.class).isExactlyInstanceOf(InMemoryFenceStore.class));
    }

    /**
     * With compaction on, the starter's store refuses checks in transactions above READ COMMITTED on PostgreSQL and
     * H2, whose snapshot could judge a folded resource against an old family floor; without it, they check.
     */
    @Test
    void withCompactionOnTheStoreRefusesChecksAboveReadCommitted() {
        database.withPropertyValues(h2("compactedrr"), "fencing.compaction.enabled=true",
                "fencing.compaction.issuer-tokens=one-sequence").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(checkAt(context, "ISOLATION_REPEATABLE_READ", "compacted:1"))
                            .isInstanceOf(dev.fencing.store.OutsideTransactionException.class)
                            .hasMessageContaining("fencing.compaction.enabled");
                    assertThat(checkAt(context, "ISOLATION_READ_COMMITTED", "compacted:1")).isNull();
                });
        database.withPropertyValues(h2("notcompactedrr")).run(context ->
                assertThat(checkAt(context, "ISOLATION_REPEATABLE_READ", "notcompacted:1")).isNull());
    }

    private static Throwable checkAt(org.springframework.context.ApplicationContext context, String isolation,
                                     String resource) {
        org.springframework.transaction.support.TransactionTemplate template =
                new org.springframework.transaction.support.TransactionTemplate(
                        context.getBean(org.springframework.transaction.PlatformTransactionManager.class));
        template.setIsolationLevelName(isolation);
        JdbcFenceStore store = context.getBean(JdbcFenceStore.class);
        return org.assertj.core.api.Assertions.catchThrowable(() -> template.executeWithoutResult(status -> {
            try {
                store.fence(resource, new dev.fencing.token.FencingToken(resource, 1, "h"), () -> null);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }));
    }

    @Test
    void checkAtCommitIsSetOnPostgreSqlAndRefusedElsewhereNamingTheDatabase() {
        database.withPropertyValues(h2("atcommit"), "fencing.store.jdbc.check-at-commit=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("PostgreSQL only")
                    .hasMessageContaining("H2").hasMessageContaining("fencing.store.jdbc.check-at-commit");
        });
        String table = "fence_atcommit_" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try {
            database.withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test",
                    "spring.datasource.username=postgres", "fencing.store.jdbc.table=" + table,
                    "fencing.store.jdbc.initialize-schema=always", "fencing.store.jdbc.check-at-commit=true")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(JdbcFenceStore.class).checksAtCommit()).isTrue();
                    });
        } finally {
            dropPostgreSqlTable(table);
        }
        database.withPropertyValues(h2("notatcommit")).run(context ->
                assertThat(context.getBean(JdbcFenceStore.class).checksAtCommit()).isFalse());
    }

    /** A transaction manager that is not a JDBC one, as JPA's and Hibernate's are not. */
    static final class NotJdbcTransactionManager
            extends org.springframework.transaction.support.AbstractPlatformTransactionManager {
        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, org.springframework.transaction.TransactionDefinition definition) {
        }

        @Override
        protected void doCommit(org.springframework.transaction.support.DefaultTransactionStatus status) {
        }

        @Override
        protected void doRollback(org.springframework.transaction.support.DefaultTransactionStatus status) {
        }
    }

    /**
     * An application's own store checking at commit, built without a transaction manager, under a transaction manager
     * that is not a JDBC one: it would refuse every call, so startup fails naming the manager; the same store under
     * a JDBC manager, or given one of its own, starts.
     */
    @Test
    void anOwnStoreCheckingAtCommitUnderANonJdbcTransactionManagerFailsStartup() {
        String table = "fence_own_atcommit_" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        ApplicationContextRunner postgresql = database.withPropertyValues(
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres");
        try {
            postgresql.withUserConfiguration(OwnAtCommitStore.class).withPropertyValues("test.table=" + table)
                    .withBean(NotJdbcTransactionManager.class).run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure())
                                .hasStackTraceContaining("checkAtCommit(true) on table '" + table + "'")
                                .hasStackTraceContaining(NotJdbcTransactionManager.class.getName())
                                .hasStackTraceContaining("transactionManager(..)");
                    });
            postgresql.withUserConfiguration(OwnAtCommitStore.class)
                    .withPropertyValues("test.table=" + table, "test.routed=true")
                    .withBean(NotJdbcTransactionManager.class).run(context -> {
                        assertThat(context).as("routed to by a RoutingFenceStore bean").hasFailed();
                        assertThat(context.getStartupFailure())
                                .hasStackTraceContaining("checkAtCommit(true) on table '" + table + "'");
                    });
            postgresql.withUserConfiguration(OwnAtCommitStore.class).withPropertyValues("test.table=" + table)
                    .run(context -> {
                        assertThat(context).as("under Boot's DataSourceTransactionManager").hasNotFailed();
                        assertThat(context.getBean(JdbcFenceStore.class).checksAtCommit()).isTrue();
                    });
            postgresql.withUserConfiguration(OwnAtCommitStore.class)
                    .withPropertyValues("test.table=" + table, "test.own-manager=true")
                    .withBean(NotJdbcTransactionManager.class).run(context ->
                            assertThat(context).as("given a JDBC manager of its own").hasNotFailed());
        } finally {
            dropPostgreSqlTable(table);
        }
    }

    private static void dropPostgreSqlTable(String table) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
             java.sql.Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnAtCommitStore {
        @Bean
        FenceStore fenceStore(javax.sql.DataSource dataSource, org.springframework.core.env.Environment environment) {
            JdbcFenceStore.Builder builder = JdbcFenceStore.builder(dataSource)
                    .table(environment.getRequiredProperty("test.table")).createTableIfMissing(true)
                    .checkAtCommit(true);
            if (environment.getProperty("test.own-manager", Boolean.class, false)) {
                builder.transactionManager(
                        new org.springframework.jdbc.support.JdbcTransactionManager(dataSource));
            }
            JdbcFenceStore store = builder.build();
            if (environment.getProperty("test.routed", Boolean.class, false)) {
                return dev.fencing.store.RoutingFenceStore.builder().route("orders", store)
                        .fallback(new dev.fencing.store.InMemoryFenceStore()).build();
            }
            return store;
        }
    }

    @Test
    void aDataSourceGivesAJdbcStoreOnTheApplicationsTransactionManagerWithItsProperties() {
        database.withPropertyValues(h2("store"), "fencing.store.jdbc.lock-timeout=2s").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class).doesNotHaveBean(TokenIssuer.class);
            JdbcFenceStore store = context.getBean(JdbcFenceStore.class);
            assertThat(store.table()).isEqualTo("fencing_max_seen");
            assertThat(store.lockTimeout()).isEqualTo(Duration.ofSeconds(2));
        });
        database.withPropertyValues(h2("storetable"), "fencing.store.jdbc.table=other_fence",
                "fencing.store.jdbc.initialize-schema=never").run(context -> {
            // the table is checked at startup: a name that does not exist fails, naming it
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("other_fence");
        });
    }

    @Test
    void aLockTimeoutBelowOneMillisecondFailsStartupNamingTheProperty() {
        database.withPropertyValues(h2("zerobound"), "fencing.store.jdbc.lock-timeout=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessage("fencing.store.jdbc.lock-timeout must be at least 1ms, was PT0S");
        });
    }

    @Test
    void theUsersStoreAndIssuerWin() {
        database.withPropertyValues(h2("userbeans"), "fencing.issuer.type=jdbc")
                .withBean("myStore", FenceStore.class, InMemoryFenceStore::new)
                .withBean("myIssuer", TokenIssuer.class, dev.fencing.issuer.InMemoryTokenIssuer::new)
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(JdbcFenceStore.class)
                            .doesNotHaveBean(JdbcTokenIssuer.class);
                    assertThat(context.getBeansOfType(FenceStore.class)).containsOnlyKeys("myStore");
                    assertThat(context.getBeansOfType(TokenIssuer.class)).containsOnlyKeys("myIssuer");
                });
    }

    @Test
    void issuerTypeJdbcGivesAJdbcTokenIssuerWithItsProperties() {
        database.withPropertyValues(h2("issuer"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=1m")
                .withBean(AcquiringLedger.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcTokenIssuer.class);
                    assertThat(context.getBean(JdbcTokenIssuer.class).table()).isEqualTo("fencing_lease");
                    assertThat(context.getBean(AcquiringLedger.class).post()).isEqualTo("posted");
                });
        // without the issuer, an acquiring method fails startup (the startup check of fencing-spring)
        database.withPropertyValues(h2("noissuer")).withBean(AcquiringLedger.class).run(context ->
                assertThat(context).hasFailed());
    }

    /** A lease under a second (a value written without its unit is in milliseconds) fails startup naming it. */
    @Test
    void aLeaseTimeUnderASecondFailsStartup() {
        database.withPropertyValues(h2("shortlease"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=30")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                            .hasMessageContaining("'fencing.issuer.jdbc.lease-time' is '30', a number without a unit");
                });
        database.withPropertyValues(h2("shortlease"), "fencing.issuer.type=jdbc",
                        "fencing.issuer.jdbc.lease-time=30ms")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                            .hasMessageContaining("fencing.issuer.jdbc.lease-time is 30 ms");
                });
        database.withPropertyValues(h2("onesecond"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=1s")
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** A lease no longer than the fence store's lock timeout can run out while its holder waits: a warning. */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void aLeaseWithinTheLockTimeoutIsWarnedOf(org.springframework.boot.test.system.CapturedOutput output) {
        String warning = "is not longer than fencing.store.jdbc.lock-timeout";
        database.withPropertyValues(h2("leasewithin"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=2s")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(JdbcTokenIssuer.class));
        assertThat(output.getAll()).contains("fencing.issuer.jdbc.lease-time (2000 ms) " + warning + " (5000 ms)");
        int before = output.getAll().length();
        database.withPropertyValues(h2("leaseabove"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=6s")
                .run(context -> assertThat(context).hasNotFailed());
        database.withPropertyValues(h2("lockabove"), "fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=6s",
                "fencing.store.jdbc.lock-timeout=6s").run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll().substring(before)).contains(warning).containsOnlyOnce(warning);
    }

    @Test
    void acquireTimeoutDefaultsToTenSecondsAndIsAProperty() {
        runner.withPropertyValues("fencing.store.type=in-memory").run(context ->
                assertThat(context.getBean(FencingConfigurer.class).acquireTimeout())
                        .isEqualTo(Duration.ofSeconds(10)));
        runner.withPropertyValues("fencing.store.type=in-memory", "fencing.acquire-timeout=250ms").run(context ->
                assertThat(context.getBean(FencingConfigurer.class).acquireTimeout())
                        .isEqualTo(Duration.ofMillis(250)));
    }

    @EnableFencing(allowInMemoryStore = true, acquireTimeoutMillis = 2500)
    @Configuration(proxyBeanMethods = false)
    static class UserEnabled {
    }

    /** The application's own settings: they apply where no fencing.* property is set. */
    @Configuration(proxyBeanMethods = false)
    static class UserConfigurer {
        @Bean
        FencingConfigurer userConfigurer() {
            return new FencingConfigurer() {
                @Override
                public Duration acquireTimeout() {
                    return Duration.ofMillis(700);
                }

                @Override
                public FenceMode defaultFenceMode() {
                    return FenceMode.OBSERVE;
                }

                @Override
                public java.util.Map<String, FenceMode> fenceModes() {
                    return java.util.Map.of("ledger", FenceMode.OBSERVE);
                }
            };
        }
    }

    /**
     * With the application's own {@code @EnableFencing} (which ASPECTJ mode needs) the fencing.mode, fencing.modes.*
     * and fencing.acquire-timeout properties that are set apply over the annotation's attributes, a misspelt mode
     * fails startup, and those not set leave the annotation's; a FencingConfigurer of the application's replaces them.
     */
    @Test
    void theModePropertiesApplyOverTheUsersEnableFencingAndOnlyWhenSet() {
        runner.withUserConfiguration(UserEnabled.class).withPropertyValues("fencing.modes.ledger=observe",
                "fencing.acquire-timeout=1s").run(context -> {
                    assertThat(context).hasNotFailed();
                    FenceModes modes = context.getBean(FenceModes.class);
                    assertThat(modes.observes("ledger")).isTrue();
                    assertThat(modes.defaultMode()).as("fencing.mode not set: the annotation's")
                            .isEqualTo(FenceMode.ENFORCE);
                    assertThat(context.getBean(FencingConfigurer.class).acquireTimeout())
                            .isEqualTo(Duration.ofSeconds(1));
                    Ledger ledger = context.getBean(Ledger.class);
                    assertThat(ledger.post()).as("observed: runs without a token").isEqualTo("posted");
                });
        runner.withUserConfiguration(UserEnabled.class).run(context -> {
            assertThat(context.getBean(FencingConfigurer.class).acquireTimeout())
                    .as("not set: the annotation's 2500 ms")
                    .isNull();
            assertThat(context.getBean(FenceModes.class).observes("ledger")).isFalse();
        });
        runner.withUserConfiguration(UserEnabled.class).withPropertyValues("fencing.mode=obsreve").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("fencing.mode")
                    .hasStackTraceContaining("obsreve");
        });
        // a configurer of the application's applies where no property is set; a property set wins (a new user's
        // trial: its configurer's observe mode ran over fencing.modes.<resource>=enforce, and a stale write landed)
        runner.withUserConfiguration(UserEnabled.class, UserConfigurer.class)
                .withPropertyValues("fencing.acquire-timeout=1s", "fencing.modes.ledger=enforce").run(context -> {
                    assertThat(context).hasNotFailed();
                    FenceModes modes = context.getBean(FenceModes.class);
                    assertThat(modes.mode("ledger")).as("the property").isEqualTo(FenceMode.ENFORCE);
                    assertThat(modes.defaultMode()).as("the configurer's").isEqualTo(FenceMode.OBSERVE);
                    FencingConfigurer properties = context.getBean("fencingPropertiesConfigurer",
                            FencingConfigurer.class);
                    assertThat(properties.acquireTimeout()).isEqualTo(Duration.ofSeconds(1));
                    assertThat(properties.defaultFenceMode()).as("fencing.mode not set").isNull();
                    assertThat(((org.springframework.core.Ordered) properties).getOrder())
                            .isEqualTo(org.springframework.core.Ordered.HIGHEST_PRECEDENCE);
                    Ledger ledger = context.getBean(Ledger.class);
                    assertThat(FencingContext.call(new FencingToken("ledger", 2, "a"), ledger::post))
                            .isEqualTo("posted");
                    assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 1, "a"), ledger::post))
                            .as("enforced").isInstanceOf(StaleTokenException.class);
                });
        // the starter's @EnableFencing beside a configurer: the properties' defaults do not run over it
        runner.withUserConfiguration(UserConfigurer.class).withPropertyValues("fencing.store.type=in-memory")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(FenceModes.class).mode("ledger")).isEqualTo(FenceMode.OBSERVE);
                    assertThat(context.getBean("fencingPropertiesConfigurer", FencingConfigurer.class)
                            .acquireTimeout()).as("the default does not apply over the configurer's").isNull();
                });
    }

    @Test
    void theUsersEnableFencingMakesTheAutoConfigurationBackOff() {
        runner.withUserConfiguration(UserEnabled.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(fencingAdvisors(context)).as("the checking and the acquiring points' advisors").hasSize(2);
            Ledger ledger = context.getBean(Ledger.class);
            assertThat(FencingContext.call(new FencingToken("ledger", 2, "a"), ledger::post)).isEqualTo("posted");
            assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 1, "a"), ledger::post))
                    .isInstanceOf(StaleTokenException.class);
        });
    }

    /** Records whether a transaction was active when the check ran. */
    static final class RecordingStore implements FenceStore {
        final InMemoryFenceStore delegate = new InMemoryFenceStore();
        final List<Boolean> transactionActiveAtCheck = new CopyOnWriteArrayList<>();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            transactionActiveAtCheck.add(TransactionSynchronizationManager.isActualTransactionActive());
            return delegate.fence(resource, token, write);
        }
    }

    public static class MethodTransactional {
        @Transactional
        @Fenced(resource = "orders")
        public void save() {
        }
    }

    @Transactional
    public static class TypeTransactional {
        @Fenced(resource = "orders")
        public void save() {
        }
    }

    /** The annotations in the other source order: the order of advisors, not of annotations, decides. */
    public static class MethodFencedFirst {
        @Fenced(resource = "orders")
        @Transactional
        public void save() {
        }
    }

    @Fenced(resource = "orders")
    public static class TypeFencedMethodTransactional {
        @Transactional
        public void save() {
        }
    }

    @Test
    void everyPlacementOfTheTwoAnnotationsRunsTheCheckInsideBootsTransaction() {
        database.withPropertyValues(h2("txplacements")).withBean(RecordingStore.class)
                .withBean(MethodFencedFirst.class).withBean(TypeFencedMethodTransactional.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    FencingContext.run(new FencingToken("orders", 1, "h"),
                            () -> context.getBean(MethodFencedFirst.class).save());
                    FencingContext.run(new FencingToken("orders", 2, "h"),
                            () -> context.getBean(TypeFencedMethodTransactional.class).save());
                    assertThat(context.getBean(RecordingStore.class).transactionActiveAtCheck)
                            .containsExactly(true, true);
                });
    }

    @Test
    void transactionalAndFencedOnOneMethodRunTheCheckInsideBootsTransaction() {
        database.withPropertyValues(h2("txmethod")).withBean(RecordingStore.class).withBean(MethodTransactional.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    FencingContext.run(new FencingToken("orders", 1, "h"),
                            () -> context.getBean(MethodTransactional.class).save());
                    assertThat(context.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
                });
    }

    @Test
    void classLevelTransactionalAndFencedRunTheCheckInsideBootsTransaction() {
        database.withPropertyValues(h2("txtype")).withBean(RecordingStore.class).withBean(TypeTransactional.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    FencingContext.run(new FencingToken("orders", 1, "h"),
                            () -> context.getBean(TypeTransactional.class).save());
                    assertThat(context.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
                });
    }

    @Test
    void withBootsAspectJAutoProxyingTheCheckStillRunsInsideTheTransaction() {
        database.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues(h2("txaspectj")).withBean(RecordingStore.class)
                .withBean(MethodTransactional.class).withBean(TypeTransactional.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME);
                    assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
                            .isInstanceOf(AnnotationAwareAspectJAutoProxyCreator.class);
                    FencingContext.run(new FencingToken("orders", 1, "h"),
                            () -> context.getBean(MethodTransactional.class).save());
                    FencingContext.run(new FencingToken("orders", 2, "h"),
                            () -> context.getBean(TypeTransactional.class).save());
                    assertThat(context.getBean(RecordingStore.class).transactionActiveAtCheck)
                            .containsExactly(true, true);
                });
    }

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(FENCING).withPropertyValues("fencing.store.type=in-memory");

    /** The WebFlux filter's property in a servlet application was ignored: the header was refused at request time. */
    @Test
    void theWebFluxFiltersPatternsInAServletApplicationFailStartup() {
        web.withPropertyValues("fencing.web.reactive.path-patterns=/internal/**").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("fencing.web.reactive.path-patterns is set, "
                    + "but this is a servlet application").hasMessageContaining("fencing.web.filter.url-patterns");
        });
    }

    @Test
    void aServletApplicationGetsTheExceptionAdviceButNoFilterWithoutUrlPatterns() {
        web.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingExceptionAdvice.class)
                    .doesNotHaveBean("fencingTokenFilter");
        });
        runner.withPropertyValues("fencing.store.type=in-memory", "fencing.web.filter.url-patterns=/internal/*")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencingExceptionAdvice.class)
                        .doesNotHaveBean(FilterRegistrationBean.class));
    }

    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void theTokenFilterOnlyWithUrlPatterns(org.springframework.boot.test.system.CapturedOutput output) {
        web.withPropertyValues("fencing.web.filter.url-patterns=/internal/*,/jobs/*").run(context -> {
            assertThat(context).hasNotFailed().hasBean("fencingTokenFilter");
            assertThat(context.getBean("fencingTokenFilter", FilterRegistrationBean.class).getUrlPatterns())
                    .containsExactly("/internal/*", "/jobs/*");
        });
        // accepted unsigned: said at startup, since any caller there can present any token (a keyed trial's ask)
        assertThat(output.getAll().lines().filter(line -> line.contains("Fencing-Token headers are accepted on "
                + "/internal/*, /jobs/* (fencing.web.filter.url-patterns) unsigned"))).singleElement(
                org.assertj.core.api.InstanceOfAssertFactories.STRING).contains("WARN");
        web.withPropertyValues("fencing.web.filter.url-patterns[0]=/internal/*").run(context ->
                assertThat(context).hasBean("fencingTokenFilter"));
        web.withPropertyValues("fencing.web.filter.url-patterns=/deposit,*.do").run(context ->
                assertThat(context).hasNotFailed().hasBean("fencingTokenFilter"));
    }

    @Test
    void aUrlPatternServletsDoNotUnderstandFailsStartupNamingIt() {
        for (String pattern : new String[] {"/internal/**", "internal/*", "/in*/x", "/**/*.do"}) {
            web.withPropertyValues("fencing.web.filter.url-patterns=/jobs/*," + pattern).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("fencing.web.filter.url-patterns holds '" + pattern + "'")
                        .hasMessageContaining("'/internal/*'");
            });
        }
    }

    /** Every request as the trusted paths: a startup failure naming the property (not a filter's init failure). */
    @Test
    void urlPatternsCoveringEveryRequestFailStartupNamingTheProperty() {
        for (String pattern : new String[] {"/*", "/"}) {
            web.withPropertyValues("fencing.web.filter.url-patterns=" + pattern).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                        .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                        .hasMessageContaining("fencing.web.filter.url-patterns holds '" + pattern + "', every request")
                        .hasMessageContaining("'/internal/*'");
            });
        }
    }

    /** A header no token filter admitted is refused before any handler, with or without url-patterns. */
    @Test
    void theUnadmittedTokenInterceptorIsRegisteredInEveryServletApplication() {
        web.run(context -> assertThat(context).hasNotFailed().hasBean("fencingUnadmittedTokenInterceptor"));
        web.withPropertyValues("fencing.web.filter.url-patterns=/internal/*").run(context ->
                assertThat(context).hasNotFailed().hasBean("fencingUnadmittedTokenInterceptor"));
        runner.withPropertyValues("fencing.store.type=in-memory").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean("fencingUnadmittedTokenInterceptor"));
    }

    /** Every servlet application closes, first thing on every path, the scopes a request left open on its thread. */
    @Test
    void theLeftBindingsFilterIsFirstOnEveryPathOfEveryServletApplication() {
        web.run(context -> {
            assertThat(context).hasNotFailed();
            FilterRegistrationBean<?> registration = context.getBean("fencingLeftBindingsFilter",
                    FilterRegistrationBean.class);
            assertThat(registration.getFilter()).isInstanceOf(dev.fencing.web.LeftBindingsFilter.class);
            assertThat(registration.getOrder()).isEqualTo(Integer.MIN_VALUE);
            assertThat(registration.getUrlPatterns()).isEmpty(); // every path
        });
    }

    /**
     * A task on a Reactor scheduler that leaves a scope open has it closed when it ends, counted with the
     * application's registry, while the context runs; the JVM-wide hook goes with the context.
     */
    @Test
    void tasksOnReactorSchedulersHaveWhatTheyLeftClosedWhileTheContextRuns() {
        reactor.core.scheduler.Scheduler single = reactor.core.scheduler.Schedulers.newSingle("starter-leak-test");
        FencingToken leaked = new FencingToken("accounts:5", 3, "leaker");
        java.util.function.Supplier<FencingToken> leakThenLook = () -> {
            reactor.core.publisher.Mono.fromRunnable(() -> FencingContext.bind(leaked)).subscribeOn(single)
                    .block(Duration.ofSeconds(10));
            return reactor.core.publisher.Mono.fromCallable(() -> java.util.Optional.ofNullable(
                    FencingContext.current("accounts:5"))).subscribeOn(single).block(Duration.ofSeconds(10))
                    .orElse(null);
        };
        try {
            runner.withPropertyValues("fencing.store.type=in-memory")
                    .withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run(context -> {
                        assertThat(context).hasNotFailed()
                                .hasSingleBean(dev.fencing.reactive.LeftScopesOnSchedulers.class);
                        assertThat(leakThenLook.get()).isNull();
                        assertThat(context.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                                .get("fencing.scopes.left").tag("carrier", "reactor").counter().count())
                                .isEqualTo(1);
                    });
            assertThat(leakThenLook.get()).as("the hook is gone with the context").isEqualTo(leaked);
        } finally {
            single.dispose();
        }
    }

    /** With the application's meter registry, a request that left a scope open is counted in fencing.scopes.left. */
    @Test
    void theLeftBindingsFilterCountsLeaksWithTheApplicationsRegistry() {
        web.withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    jakarta.servlet.Filter filter = context.getBean("fencingLeftBindingsFilter",
                            FilterRegistrationBean.class).getFilter();
                    filter.doFilter(new org.springframework.mock.web.MockHttpServletRequest("POST", "/leak"),
                            new org.springframework.mock.web.MockHttpServletResponse(),
                            (request, response) -> FencingContext.bind(new FencingToken("accounts:3", 4, "leaker")));
                    assertThat(FencingContext.isEmpty()).isTrue();
                    assertThat(context.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                            .get("fencing.scopes.left").tag("carrier", "http").counter().count()).isEqualTo(1);
                });
    }

    /**
     * A WebMvcConfigurationSupport subclass ignores WebMvcConfigurer beans, and with them the interceptor that refuses
     * headers no filter admitted: a startup failure naming the fix (a new user's trial had a zombie's request written
     * by an acquiring method); Spring MVC's own configuration, @EnableWebMvc, passes.
     */
    @Test
    void aWebMvcConfigurationThatDropsTheInterceptorFailsStartup() {
        web.withUserConfiguration(OwnMvcSupport.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .isInstanceOf(dev.fencing.FencingConfigurationException.class)
                    .hasMessageContaining("'requestMappingHandlerMapping'")
                    .hasMessageContaining("UnadmittedTokenInterceptor")
                    .hasMessageContaining("DelegatingWebMvcConfiguration");
        });
        web.withUserConfiguration(EnabledMvc.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnMvcSupport extends org.springframework.web.servlet.config.annotation.WebMvcConfigurationSupport {
    }

    @Configuration(proxyBeanMethods = false)
    @org.springframework.web.servlet.config.annotation.EnableWebMvc
    static class EnabledMvc {
    }

    /** Excluded, the web auto-configuration takes the header's refusal with it: said at startup. */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void aServletApplicationWithoutTheWebAutoConfigurationIsWarned(
            org.springframework.boot.test.system.CapturedOutput output) {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("FencingWebAutoConfiguration did not run (excluded?)");
        int before = output.toString().length();
        web.run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("did not run (excluded?)");
    }

    /** On WebFlux too (nothing was said there: the header was ignored, refusals were bare 500s). */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void aWebFluxApplicationWithoutTheWebFluxAutoConfigurationIsWarned(
            org.springframework.boot.test.system.CapturedOutput output) {
        org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner reactive =
                new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
                        .withPropertyValues("fencing.store.type=in-memory");
        reactive.withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("FencingWebFluxAutoConfiguration did not run (excluded?)");
        int before = output.toString().length();
        reactive.withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                FencingWebFluxAutoConfiguration.class)).run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("did not run (excluded?)");
    }

    /**
     * An in-memory store or issuer the application declared is said to be one JVM's only, as the property route
     * says it; an issuer type beside an issuer bean of the application is said to have no effect.
     */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void inMemoryBeansOfTheApplicationAndAnIgnoredIssuerTypeAreWarned(
            org.springframework.boot.test.system.CapturedOutput output) {
        new ApplicationContextRunner().withConfiguration(FENCING)
                .withBean("myStore", InMemoryFenceStore.class, InMemoryFenceStore::new)
                .withBean("myIssuer", dev.fencing.issuer.InMemoryTokenIssuer.class,
                        dev.fencing.issuer.InMemoryTokenIssuer::new)
                .withPropertyValues("fencing.issuer.type=jdbc", "fencing.issuer.jdbc.lease-time=10s")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("The application's FenceStore bean 'myStore' is an InMemoryFenceStore")
                .contains("The application's TokenIssuer bean 'myIssuer' is an InMemoryTokenIssuer")
                .contains("fencing.issuer.type=jdbc, fencing.issuer.jdbc.lease-time are set, but the application "
                        + "defines its own TokenIssuer bean 'myIssuer'");
        int before = output.toString().length();
        new ApplicationContextRunner().withConfiguration(FENCING).withPropertyValues("fencing.store.type=in-memory",
                "fencing.issuer.type=none").run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("The application's")
                .doesNotContain("is set, but the application defines");
    }

    private static List<Advisor> fencingAdvisors(org.springframework.context.ApplicationContext context) {
        return context.getBeansOfType(Advisor.class).values().stream()
                .filter(advisor -> advisor.getClass().getSimpleName().equals("FencingAdvisor")).toList();
    }
}
