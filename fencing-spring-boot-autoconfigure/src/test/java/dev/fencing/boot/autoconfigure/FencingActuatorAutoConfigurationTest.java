package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.boot.actuate.FencingEndpoint;
import dev.fencing.boot.actuate.FencingHealthIndicator;
import dev.fencing.boot.autoconfigure.FencingAutoConfigurationTest.Ledger;
import dev.fencing.context.FencingContext;
import dev.fencing.jdbc.JdbcDialect;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** The fencing health indicator and the fencing endpoint, on ApplicationContextRunner contexts. */
class FencingActuatorAutoConfigurationTest {

    /** An H2 database with the default fence and lease tables (the scripts fencing-jdbc ships). */
    private static String h2(String name) {
        return "spring.datasource.url=jdbc:h2:mem:actuator-" + name + ";DB_CLOSE_DELAY=-1;INIT=RUNSCRIPT FROM "
                + "'classpath:dev/fencing/jdbc/schema-h2.sql'\\;RUNSCRIPT FROM "
                + "'classpath:dev/fencing/jdbc/lease-h2.sql'";
    }

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingJdbcAutoConfiguration.class, FencingActuatorAutoConfiguration.class,
                    DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(Ledger.class);

    @Test
    void healthIsUpWhileTheTableAnswersAndDownWithTheReasonOnceItIsGone() {
        runner.withPropertyValues(h2("health"), "fencing.issuer.type=jdbc").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingHealthIndicator.class);
            Health up = context.getBean(FencingHealthIndicator.class).health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("store",
                    Map.of("type", "JdbcFenceStore", "database", "H2", "table", "fencing_max_seen",
                            "lockTimeout", "PT5S"));
            assertThat(up.getDetails()).containsEntry("issuer",
                    Map.of("type", "JdbcTokenIssuer", "table", "fencing_lease", "leaseTime", "PT30S"));

            // verify() passed at startup and remembers it: the indicator's live read sees the table go
            new JdbcTemplate(context.getBean(DataSource.class)).execute("DROP TABLE fencing_max_seen");
            Health down = context.getBean(FencingHealthIndicator.class).health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat((String) down.getDetails().get("error")).startsWith("fence store: ")
                    .containsIgnoringCase("fencing_max_seen");
            assertThat(down.getDetails()).containsKey("store");
        });
    }

    /** Two JDBC stores behind a routing store: {@code ledger} to a table of its own, everything else to the default. */
    @Configuration(proxyBeanMethods = false)
    static class RoutedStores {
        @Bean
        dev.fencing.store.RoutingFenceStore fenceStore(DataSource dataSource) {
            dev.fencing.jdbc.JdbcFenceStore ledger = dev.fencing.jdbc.JdbcFenceStore.builder(dataSource)
                    .table("fencing_max_seen_ledger").createTableIfMissing(true).build();
            dev.fencing.jdbc.JdbcFenceStore accounts = dev.fencing.jdbc.JdbcFenceStore.builder(dataSource).build();
            return dev.fencing.store.RoutingFenceStore.builder().route("ledger", ledger).route("accounts", accounts)
                    .build();
        }
    }

    /**
     * Behind a routing store, health reads each routed table and names the route whose table is gone (a new user's
     * trial with two databases saw UP while every call of one route failed, and only the store's type in the
     * details); the details show the routes; the endpoint reads max_seen from the resource's route.
     */
    @Test
    @SuppressWarnings("unchecked")
    void behindARoutingStoreHealthReadsEveryRouteAndTheEndpointTheResourcesRoute() {
        runner.withPropertyValues(h2("routed"), "management.endpoints.web.exposure.include=fencing")
                .withUserConfiguration(RoutedStores.class).run(context -> {
            assertThat(context).hasNotFailed();
            FencingHealthIndicator health = context.getBean(FencingHealthIndicator.class);
            Health up = health.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            Map<String, Object> routes = (Map<String, Object>) ((Map<String, Object>) up.getDetails().get("store"))
                    .get("routes");
            assertThat(routes).containsOnlyKeys("ledger", "accounts");
            assertThat((Map<String, Object>) routes.get("ledger")).containsEntry("table", "fencing_max_seen_ledger");

            Ledger ledger = context.getBean(Ledger.class);
            try (var scope = FencingContext.bind(new FencingToken("ledger", 7, "h"))) {
                ledger.post();
            }
            FencingEndpoint endpoint = context.getBean(FencingEndpoint.class);
            assertThat(endpoint.resource("ledger")).containsEntry("maxSeen", 7L);
            assertThat(endpoint.resource("accounts:1")).containsEntry("maxSeen", null);
            assertThat((String) endpoint.resource("orders").get("storeError")).contains("No fence store is routed");

            new JdbcTemplate(context.getBean(DataSource.class))
                    .execute("ALTER TABLE fencing_max_seen_ledger RENAME TO fencing_max_seen_ledger_gone");
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat((String) down.getDetails().get("error")).startsWith("fence store of route 'ledger': ")
                    .containsIgnoringCase("fencing_max_seen_ledger");
            Map<String, Object> unreadable = endpoint.resource("ledger:2024");
            assertThat(unreadable).containsEntry("route", "ledger");
            assertThat((String) unreadable.get("storeError")).startsWith("fence store of route 'ledger': ")
                    .containsIgnoringCase("fencing_max_seen_ledger");
            assertThat(endpoint.resource("accounts:1")).containsEntry("route", "accounts")
                    .doesNotContainKey("storeError");
            assertThat(endpoint.resource("orders")).containsEntry("route", null);
        });
    }

    /** A bound on the advance is shown, so instances configured apart can be told (an operator's trial could not). */
    @Test
    void theStoresMaxAdvanceIsShownWhenSet() {
        runner.withPropertyValues(h2("advance"), "fencing.store.jdbc.max-advance=100").run(context ->
                assertThat(context.getBean(FencingHealthIndicator.class).health().getDetails()).containsEntry("store",
                        Map.of("type", "JdbcFenceStore", "database", "H2", "table", "fencing_max_seen",
                                "lockTimeout", "PT5S",
                                "maxAdvance", 100L)));
    }

    /** A bound below 1 fails startup naming the property (it named a Java constant no property can spell). */
    @Test
    void aMaxAdvanceBelowOneFailsStartupNamingTheProperty() {
        runner.withPropertyValues(h2("advance0"), "fencing.store.jdbc.max-advance=0").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessage("fencing.store.jdbc.max-advance must be at least 1, was 0; leave it unset for no "
                                + "bound on one advance"));
    }

    @Test
    void healthIsDownWithTheReasonWhenTheIssuersLeaseTableDoesNotVerify() {
        runner.withPropertyValues(h2("issuerhealth")).withUserConfiguration(UncheckedIssuerConfig.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Health health = context.getBean(FencingHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat((String) health.getDetails().get("error")).startsWith("token issuer: ")
                            .containsIgnoringCase("missing_lease");
                    assertThat(health.getDetails()).containsEntry("issuer",
                            Map.of("type", "JdbcTokenIssuer", "table", "missing_lease", "leaseTime", "PT30S"));
                });
    }

    /** An issuer whose table is checked only when asked (verifyOnBuild(false)), on a table that does not exist. */
    @Configuration(proxyBeanMethods = false)
    static class UncheckedIssuerConfig {
        @Bean
        JdbcTokenIssuer tokenIssuer(DataSource dataSource) {
            return JdbcTokenIssuer.builder(dataSource).table("missing_lease").dialect(JdbcDialect.H2)
                    .verifyOnBuild(false).build();
        }
    }

    @Test
    void theHealthIndicatorCanBeTurnedOffAndNeedsAStore() {
        runner.withPropertyValues(h2("healthoff"), "management.health.fencing.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FencingHealthIndicator.class));
        runner.withPropertyValues("fencing.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FencingHealthIndicator.class)
                        .doesNotHaveBean(FencingEndpoint.class));
        runner.withPropertyValues("fencing.store.type=in-memory").run(context -> {
            assertThat(context).hasNotFailed();
            Health health = context.getBean(FencingHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("store", Map.of("type", "InMemoryFenceStore"));
        });
    }

    @Test
    void theEndpointExistsOnlyWhenExposed() {
        runner.withPropertyValues(h2("hidden")).run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FencingEndpoint.class));
        runner.withPropertyValues(h2("exposed"), "management.endpoints.web.exposure.include=health,fencing")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FencingEndpoint.class));
    }

    @Test
    @SuppressWarnings("unchecked")
    void theEndpointShowsTheConfigurationTheCountsAndMaxSeenAfterAStaleRejection() {
        runner.withPropertyValues(h2("endpoint"), "management.endpoints.web.exposure.include=fencing",
                "fencing.acquire-timeout=3s").run(context -> {
            assertThat(context).hasNotFailed();
            Ledger ledger = context.getBean(Ledger.class);
            FencingContext.call(new FencingToken("ledger", 7, "a"), ledger::post);
            assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 3, "b"), ledger::post))
                    .isInstanceOf(StaleTokenException.class);

            FencingEndpoint endpoint = context.getBean(FencingEndpoint.class);
            Map<String, Object> all = endpoint.fencing();
            assertThat(all).containsEntry("store",
                    Map.of("type", "JdbcFenceStore", "database", "H2", "table", "fencing_max_seen",
                            "lockTimeout", "PT5S"));
            assertThat(all).containsEntry("issuer", Map.of("type", "none"));
            assertThat(all).containsEntry("acquireTimeout", "PT3S");
            Map<String, Map<String, Long>> checks = (Map<String, Map<String, Long>>) all.get("checks");
            assertThat(checks.get("ledger")).containsEntry("accepted", 1L).containsEntry("stale", 1L)
                    .containsEntry("missing", 0L);

            Map<String, Object> one = endpoint.resource("ledger");
            assertThat(one).containsEntry("resource", "ledger").containsEntry("maxSeen", 7L);
            assertThat((Map<String, Long>) one.get("checks")).containsEntry("stale", 1L);
            assertThat(endpoint.resource("never-used")).containsEntry("maxSeen", null)
                    .containsEntry("countedAs", "never-used");
            // an effective resource: its own max_seen, the counts of the name it is counted under
            Map<String, Object> keyed = endpoint.resource("ledger:99");
            assertThat(keyed).containsEntry("resource", "ledger:99").containsEntry("maxSeen", null)
                    .containsEntry("countedAs", "ledger").containsEntry("familyFloor", null);
            assertThat((Map<String, Long>) keyed.get("checks")).containsEntry("stale", 1L);
            // folded by compaction: no max_seen of its own, judged against the family's floor, which is shown
            new dev.fencing.jdbc.JdbcFenceAdmin(context.getBean(dev.fencing.jdbc.JdbcFenceStore.class))
                    .raiseFloor(dev.fencing.store.sql.FenceSql.familyFloorKey("ledger"), 42);
            assertThat(endpoint.resource("ledger:99")).containsEntry("familyFloor", 42L);
            assertThat(endpoint.resource("ledger")).doesNotContainKey("familyFloor");
            // the floor row's own key is not a resource: refused (400), not shown as one
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> endpoint.resource("ledger\u001f"))
                    .isInstanceOf(org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class)
                    .hasMessageContaining("control character at index 6");

            // the last rejections, newest first; holder ids hidden by default
            List<Map<String, Object>> rejections = (List<Map<String, Object>>) all.get("rejections");
            assertThat(rejections).hasSize(1);
            assertThat(rejections.get(0)).containsEntry("resource", "ledger").containsEntry("presentedValue", 3L)
                    .containsEntry("maxSeen", 7L).containsEntry("verdict", "stale")
                    .containsEntry("method", "FencingAutoConfigurationTest.Ledger.post()")
                    .containsKey("time").doesNotContainKey("holder");

            // the table unreadable (an operator's trial got a bare 500): the reason in place of max_seen, the counts
            // kept. Its max_seen column dropped, not the table renamed: each new pooled connection runs the H2 URL's
            // INIT script, which created the table again when the pool opened one after the rename (a CI run did)
            new org.springframework.jdbc.core.JdbcTemplate(context.getBean(javax.sql.DataSource.class))
                    .execute("ALTER TABLE fencing_max_seen DROP COLUMN max_seen");
            Map<String, Object> unreadable = endpoint.resource("ledger:99");
            assertThat(unreadable).doesNotContainKey("maxSeen").containsEntry("countedAs", "ledger");
            assertThat((String) unreadable.get("storeError")).startsWith("fence store: ")
                    .containsIgnoringCase("fencing_max_seen");
            assertThat((Map<String, Long>) unreadable.get("checks")).containsEntry("stale", 1L);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void theEndpointCountsTheLocksNoCheckSawPerResource() {
        runner.withPropertyValues(h2("unchecked"), "management.endpoints.web.exposure.include=fencing",
                "fencing.issuer.type=jdbc").withBean(FencingAutoConfigurationTest.AcquiringLedger.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    FencingEndpoint endpoint = context.getBean(FencingEndpoint.class);
                    assertThat((Map<String, Long>) endpoint.fencing().get("uncheckedLeases")).isEmpty();

                    // the acquiring method writes nothing through a @Fenced check: its lock went unchecked, twice
                    FencingAutoConfigurationTest.AcquiringLedger acquiring =
                            context.getBean(FencingAutoConfigurationTest.AcquiringLedger.class);
                    acquiring.post();
                    acquiring.post();
                    assertThat((Map<String, Long>) endpoint.fencing().get("uncheckedLeases"))
                            .containsExactly(Map.entry("ledger", 2L));
                    assertThat(endpoint.resource("ledger")).containsEntry("uncheckedLeases", 2L);
                    assertThat(endpoint.resource("other")).containsEntry("uncheckedLeases", 0L);
                });
    }

    @Test
    @SuppressWarnings("unchecked")
    void aRejectionListenerOfTheApplicationIsToldAndTheEndpointStillRecordsTheRejection() {
        List<dev.fencing.rule.TokenRejectedException> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        runner.withPropertyValues(h2("listener"), "management.endpoints.web.exposure.include=fencing")
                .withBean("auditListener", dev.fencing.guard.RejectionListener.class, () -> heard::add)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Ledger ledger = context.getBean(Ledger.class);
                    FencingContext.call(new FencingToken("ledger", 7, "a"), ledger::post);
                    assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 3, "b"), ledger::post))
                            .isInstanceOf(StaleTokenException.class);
                    assertThat(heard).singleElement().satisfies(r -> assertThat(r.presented().value()).isEqualTo(3));
                    List<Map<String, Object>> rejections = (List<Map<String, Object>>) context
                            .getBean(FencingEndpoint.class).fencing().get("rejections");
                    assertThat(rejections).singleElement().satisfies(r -> assertThat(r)
                            .containsEntry("presentedValue", 3L).containsEntry("verdict", "stale"));
                });
    }

    @Test
    @SuppressWarnings("unchecked")
    void holderIdsAreShownOnlyWhenAsked() {
        runner.withPropertyValues(h2("holders"), "management.endpoints.web.exposure.include=fencing",
                "fencing.actuator.show-holders=true").run(context -> {
            Ledger ledger = context.getBean(Ledger.class);
            FencingContext.call(new FencingToken("ledger", 7, "a"), ledger::post);
            assertThatThrownBy(() -> FencingContext.call(new FencingToken("ledger", 7, "zombie"), ledger::post))
                    .isInstanceOf(dev.fencing.rule.DuplicateTokenException.class);
            List<Map<String, Object>> rejections =
                    (List<Map<String, Object>>) context.getBean(FencingEndpoint.class).fencing().get("rejections");
            assertThat(rejections).singleElement().satisfies(r -> assertThat(r)
                    .containsEntry("holder", "zombie").containsEntry("verdict", "duplicate"));
        });
    }
}
