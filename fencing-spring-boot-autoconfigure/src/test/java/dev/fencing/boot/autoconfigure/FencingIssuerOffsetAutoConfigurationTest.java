package dev.fencing.boot.autoconfigure;

import dev.fencing.boot.actuate.FencingAdminWebExtension;
import dev.fencing.boot.actuate.FencingEndpoint;
import dev.fencing.boot.autoconfigure.FencingAutoConfigurationTest.Ledger;
import dev.fencing.issuer.InMemoryIssuerBase;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import javax.sql.DataSource;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code fencing.issuer.offset.*}: the application's TokenIssuer bean issues its tokens plus the base, stored once;
 * a base that is not positive, differs from the stored one, or is not above the store's highest max_seen fails
 * startup. Also the actuator's floor raise after a restore ({@code POST /actuator/fencing}).
 */
class FencingIssuerOffsetAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingIssuerOffsetAutoConfiguration.class,
                    FencingAutoConfiguration.class, FencingActuatorAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(Ledger.class)
            .withPropertyValues("fencing.store.type=in-memory",
                    "fencing.store.in-memory.single-instance=true",
                    "management.endpoints.web.exposure.include=fencing");

    @Test
    void withoutTheBasePropertyTheIssuerIsLeftAlone() {
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(TokenIssuer.class)).isInstanceOf(InMemoryTokenIssuer.class);
        });
    }

    @Test
    void theIssuerBeanIssuesItsTokensPlusTheStoredBase() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=1000", "fencing.issuer.offset.name=to-zk")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    TokenIssuer issuer = context.getBean(TokenIssuer.class);
                    assertThat(issuer).isInstanceOf(OffsetTokenIssuer.class).isInstanceOf(IssuedTokens.class);
                    try (Lease lease = issuer.acquire("ledger", Duration.ofSeconds(1))) {
                        assertThat(lease.token().value()).isEqualTo(1001);
                    }
                    assertThat(bases.stored("to-zk")).hasValue(1000);
                    @SuppressWarnings("unchecked")
                    Map<String, Object> described = (Map<String, Object>) context.getBean(FencingEndpoint.class)
                            .fencing().get("issuer");
                    assertThat(described).containsEntry("offsetBase", 1000L)
                            .containsEntry("type", "InMemoryTokenIssuer");
                });
    }

    @Test
    void aBaseThatIsNotPositiveFailsStartupNamingTheProperty() {
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withBean(IssuerBase.class, InMemoryIssuerBase::new)
                .withPropertyValues("fencing.issuer.offset.base=0")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("fencing.issuer.offset.base must be a positive number"));
    }

    @Test
    void aBaseThatDiffersFromTheStoredOneFailsStartup() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        bases.establish("default", 5_000);
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=500")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("configured base 500 differs from the stored base 5000"));
        assertThat(bases.stored("default")).hasValue(5_000);
    }

    @Test
    void aFirstBaseNotAboveTheStoresHighestMaxSeenFailsStartupAndIsNotStored() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("accounts:1", new FencingToken("accounts:1", 700, "old"), () -> null);
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withBean(FenceStore.class, () -> store)
                .withPropertyValues("fencing.issuer.offset.base=600")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("base 600 is not above the fence store's highest max_seen 700"));
        assertThat(bases.stored("default")).isEmpty();
    }

    /**
     * Moving from the JDBC lease: a token the old lease table handed out but no fence store has seen (its holder
     * paused before writing) is above the fence table's max_seen. A first base between the two was stored, and that
     * holder's late write would then pass over the new issuer's holders.
     */
    @Test
    void aFirstBaseNotAboveThePreviousLeaseTablesHighestTokenFailsStartupAndIsNotStored() throws Throwable {
        DriverManagerDataSource dataSource = new DriverManagerDataSource(
                "jdbc:h2:mem:offset-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
        dev.fencing.jdbc.JdbcTokenIssuer old = dev.fencing.jdbc.JdbcTokenIssuer.builder(dataSource)
                .createTableIfMissing(true).leaseTime(java.time.Duration.ofSeconds(30)).build();
        InMemoryFenceStore store = new InMemoryFenceStore();
        for (int i = 0; i < 3; i++) {
            try (var lease = old.acquire("accounts:1", java.time.Duration.ofSeconds(5))) {
                store.fence("accounts:1", lease.token(), () -> null); // presented: max_seen 1, 2, 3
            }
        }
        var unpresented = old.acquire("accounts:1", java.time.Duration.ofSeconds(5)); // 4: its holder paused
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        var migration = runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withBean(IssuerBase.class, () -> bases).withBean(FenceStore.class, () -> store)
                .withBean(DataSource.class, () -> dataSource);

        migration.withPropertyValues("fencing.issuer.offset.base=4")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("base 4 is not above the highest token 4 of the lease table "
                                + "'fencing_lease' on the application's DataSource (fencing.issuer.jdbc.table)")
                        .hasStackTraceContaining("nothing was stored"));
        assertThat(bases.stored("default")).isEmpty();
        migration.withPropertyValues("fencing.issuer.offset.base=4", "fencing.issuer.offset.check-fence-store=false")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(bases.stored("default")).hasValue(4);
        unpresented.close();
        migration.withPropertyValues("fencing.issuer.offset.base=1000", "fencing.issuer.offset.name=again")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(bases.stored("again")).hasValue(1000);
    }

    /** 'zk-2026 ' (a properties file keeps the space) stored a second migration beside 'zk-2026'. */
    @Test
    void aMigrationNameWithSpacesAroundItFailsStartup() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                        new org.springframework.core.env.MapPropertySource("file", java.util.Map.of(
                                "fencing.issuer.offset.base", "1000", "fencing.issuer.offset.name", "zk-2026 "))))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining(
                            "fencing.issuer.offset.name 'zk-2026 ' has spaces around it");
                });
        assertThat(bases.storedBases()).isEmpty();
    }

    @Test
    void withoutADurablePlaceForTheBaseStartupFails() {
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withPropertyValues("fencing.issuer.offset.base=100")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("nowhere durable to store it"));
    }

    @Test
    void withoutAnIssuerBaseBeanTheBaseGoesToTheTableOnTheDataSource() {
        DriverManagerDataSource dataSource = new DriverManagerDataSource(
                "jdbc:h2:mem:offset-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
        new JdbcIssuerBase(dataSource, "migration_bases", true); // created by the application's migrations
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(DataSource.class, () -> dataSource)
                .withPropertyValues("fencing.issuer.offset.base=4000", "fencing.issuer.offset.name=to-etcd",
                        "fencing.issuer.offset.table=migration_bases")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(new JdbcIssuerBase(dataSource, "migration_bases").stored("to-etcd")).hasValue(4000);
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(DataSource.class, () -> dataSource)
                .withPropertyValues("fencing.issuer.offset.base=400", "fencing.issuer.offset.name=to-etcd",
                        "fencing.issuer.offset.table=migration_bases")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("differs from the stored base 4000"));
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(DataSource.class, () -> dataSource)
                .withPropertyValues("fencing.issuer.offset.base=4000", "fencing.issuer.offset.table=no_such_table",
                        "fencing.issuer.offset.initialize-schema=never")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Issuer base table 'no_such_table' is missing"));
    }

    /**
     * The starter's own JdbcTokenIssuer, a context-refresh listener by its declared type: wrapped, it failed the
     * refresh (the event multicaster asked the wrapper for a listener) after the base was stored (an operator's trial).
     */
    @Test
    void theStartersJdbcIssuerIsShiftedAndTheContextRefreshes() {
        String url = "jdbc:h2:mem:offset-jdbc-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;INIT=RUNSCRIPT FROM "
                + "'classpath:dev/fencing/jdbc/lease-h2.sql'";
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, FencingJdbcAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + url, "fencing.issuer.type=jdbc",
                        "fencing.issuer.offset.base=1000000", "fencing.issuer.offset.initialize-schema=always")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    TokenIssuer issuer = context.getBean(TokenIssuer.class);
                    assertThat(issuer).isInstanceOf(OffsetTokenIssuer.class);
                    try (Lease lease = issuer.acquire("ledger", Duration.ofSeconds(1))) {
                        assertThat(lease.token().value()).isEqualTo(1_000_001);
                    }
                    context.publishEvent(new ContextRefreshedEvent(context)); // forwarded, not asked of the wrapper
                });
    }

    @Test
    void theBaseTableIsCreatedOnlyWhenInitializeSchemaSaysSoAndAMissingOneNamesTheProperty() {
        DriverManagerDataSource h2 = new DriverManagerDataSource(
                "jdbc:h2:mem:offset-init-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
        WebApplicationContextRunner offset = runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withBean(DataSource.class, () -> h2)
                .withPropertyValues("fencing.issuer.offset.base=4000", "fencing.issuer.offset.table=init_bases");
        offset.withPropertyValues("fencing.issuer.offset.initialize-schema=never")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Issuer base table 'init_bases' is missing")
                        .hasStackTraceContaining("fencing.issuer.offset.initialize-schema=always (it is never)"));
        offset.run(context -> assertThat(context).hasNotFailed()); // embedded by default: H2 in memory
        assertThat(new JdbcIssuerBase(h2, "init_bases").stored("default")).hasValue(4000);
    }

    @Test
    void onPostgresqlEmbeddedLeavesTheBaseTableMissingAndAlwaysCreatesIt() {
        String table = "fit_offset_base_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10)
                .toLowerCase(Locale.ROOT);
        DriverManagerDataSource postgres = new DriverManagerDataSource(
                "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        WebApplicationContextRunner offset = runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withBean(DataSource.class, () -> postgres)
                .withPropertyValues("fencing.issuer.offset.base=4000", "fencing.issuer.offset.table=" + table);
        try {
            offset.withPropertyValues("fencing.issuer.offset.initialize-schema=embedded")
                    .run(context -> assertThat(context).hasFailed().getFailure()
                            .hasStackTraceContaining("Issuer base table '" + table + "' is missing")
                            .hasStackTraceContaining("initialize-schema=always (it is embedded)"));
            offset.withPropertyValues("fencing.issuer.offset.initialize-schema=always")
                    .run(context -> assertThat(context).hasNotFailed());
            assertThat(new JdbcIssuerBase(postgres, table).stored("default")).hasValue(4000);
        } finally {
            new JdbcTemplate(postgres).execute("DROP TABLE IF EXISTS " + table);
        }
    }

    /** An issuer whose container callbacks are recorded: the wrapper must forward its close. */
    static final class ClosingIssuer implements TokenIssuer, AutoCloseable {
        final InMemoryTokenIssuer inner = new InMemoryTokenIssuer();
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public Lease acquire(String resource, Duration timeout) {
            return inner.acquire(resource, timeout);
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    @Test
    void theWrappedIssuerIsStillClosedWithTheContext() {
        ClosingIssuer raw = new ClosingIssuer();
        runner.withBean(TokenIssuer.class, () -> raw).withBean(IssuerBase.class, InMemoryIssuerBase::new)
                .withPropertyValues("fencing.issuer.offset.base=100")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(TokenIssuer.class)).isInstanceOf(OffsetTokenIssuer.class);
                    assertThat(raw.closed).isFalse();
                });
        assertThat(raw.closed).isTrue();
    }

    @Test
    void theActuatorRaisesEveryFloorAfterARestore() {
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true").run(context -> {
            assertThat(context).hasNotFailed();
            FenceStore store = context.getBean(FenceStore.class);
            store.fence("a", new FencingToken("a", 5, "h"), () -> null);
            store.fence("b", new FencingToken("b", 50, "h"), () -> null);
            FencingAdminWebExtension admin = context.getBean(FencingAdminWebExtension.class);
            assertThat(admin.raiseFloors(null, 20L, null).getStatus()).as("needs afterRestore").isEqualTo(400);
            var answer = admin.raiseFloors(true, 20L, null);
            assertThat(answer.getStatus()).isEqualTo(200);
            // a, b, and the application's own resource (ledger), which the restored table lacks
            assertThat(answer.getBody()).containsEntry("examined", 3L).containsEntry("raised", 2L);
            assertThat(((InMemoryFenceStore) store).maxSeen("a")).hasValue(20);
            assertThat(((InMemoryFenceStore) store).maxSeen("ledger")).hasValue(20);
            assertThat(((InMemoryFenceStore) store).maxSeen("b")).hasValue(50);
            assertThat(context.getBean(MeterRegistry.class).get("fencing.admin.resets").tag("outcome", "raised")
                    .counter().count()).isEqualTo(2);
            assertThat(admin.raiseFloors(true, null, null).getStatus()).as("no issuer, no value").isEqualTo(400);
        });
    }
    /**
     * Mid-migration, an application still on the old issuer (no offset of its own) answers the actuator: its reset
     * lowered max_seen to the old issuer's counter and let the new issuer's zombie write again (a trial). The base
     * the migration stored bounds it: the reset answers 409 and the raise 400, and nothing changes.
     */
    @Test
    void anApplicationOnTheOldIssuerRefusesAResetOrRaiseBelowAStoredBase() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        bases.establish("to-zk", 1000);
        runner.withBean(TokenIssuer.class, InMemoryTokenIssuer::new).withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true").run(context -> {
                    assertThat(context).hasNotFailed();
                    InMemoryFenceStore store = (InMemoryFenceStore) context.getBean(FenceStore.class);
                    store.fence("ledger", new FencingToken("ledger", 1002, "new-issuer"), () -> null);
                    store.fence("ledger", new FencingToken("ledger", Long.MAX_VALUE, "evil"), () -> null);
                    FencingAdminWebExtension admin = context.getBean(FencingAdminWebExtension.class);

                    var reset = admin.resetFloor("ledger", null, null, null, null, null, null, null);
                    var raise = admin.raiseFloors(true, null, null);

                    assertThat(reset.getStatus()).isEqualTo(409);
                    assertThat(reset.getBody().get("error").toString())
                            .contains("is below the base 1000 that the issuer migration 'to-zk' stored");
                    assertThat(raise.getStatus()).isEqualTo(400);
                    assertThat(store.maxSeen("ledger")).hasValue(Long.MAX_VALUE);
                });
    }
}
