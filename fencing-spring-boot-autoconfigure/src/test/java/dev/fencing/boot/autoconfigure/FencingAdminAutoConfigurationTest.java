package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.boot.actuate.FencingAdminWebExtension;
import dev.fencing.boot.autoconfigure.FencingAutoConfigurationTest.Ledger;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The actuator's reset operation: absent unless {@code fencing.admin.enabled=true}, present on a store that can be
 * administered (counting in the application's registry), a startup failure naming the store on one that cannot.
 */
class FencingAdminAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingActuatorAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(Ledger.class)
            .withPropertyValues("fencing.store.type=in-memory", "management.endpoints.web.exposure.include=fencing");

    @Test
    void theResetOperationExistsOnlyWhenEnabled() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencingAdminWebExtension.class));
        runner.withPropertyValues("fencing.admin.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FencingAdminWebExtension.class));
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingAdminWebExtension.class);
            FenceStore store = context.getBean(FenceStore.class);
            store.fence("accounts:1", new FencingToken("accounts:1", Long.MAX_VALUE, "evil"), () -> null);
            var answer = context.getBean(FencingAdminWebExtension.class)
                    .resetFloor("accounts:1", "5", "true", null, null, null, null, null);
            assertThat(answer.getStatus()).isEqualTo(200);
            assertThat(answer.getBody()).containsEntry("maxSeen", 5L)
                    .containsEntry("actor", "actuator (unauthenticated)");
            assertThat(context.getBean(MeterRegistry.class).get("fencing.admin.resets").tag("outcome", "lowered")
                    .counter().count()).isEqualTo(1);
        });
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void enablingItWithoutSpringSecurityFailsStartupUnlessAllowedAndThenWarns(CapturedOutput output) {
        // a new user's trial switched a resource to observe mode unauthenticated: startup only warned
        runner.withPropertyValues("fencing.admin.enabled=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Spring Security is not on the class path")
                    .hasMessageContaining("fencing.admin.allow-unsecured=true");
        });
        int before = output.getAll().length();
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll()).contains("Spring Security is not on the class path")
                .contains("POST /actuator/fencing/{resource}").contains("protected outside this application");
        // once (a new user's trial saw it twice: the endpoint and the admin extension each said it)
        assertThat(output.getAll().substring(before).split("protected outside this application", -1)).hasSize(2);
        int warned = output.getAll().length();
        runner.run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll().substring(warned)).doesNotContain("Spring Security is not on the class path");
    }

    /**
     * Admin asked for and not served is said at startup, with the reason: the actuator missing, the endpoint not
     * exposed (it was silent: the operator found out on the first POST, a 404). Served, nothing is said.
     */
    /**
     * An application's own {@code FencingEndpoint} bean (its constructors are public) made the starter's endpoint
     * back off, and with it the only place that required Spring Security, while the admin extension was still
     * registered on that endpoint: an unauthenticated caller lowered max_seen from 50 to 1 (a red-team review).
     */
    @Test
    void anOwnEndpointBeanStillNeedsSpringSecurityOrTheAllowanceForTheAdminOperations() {
        WebApplicationContextRunner own = runner.withUserConfiguration(OwnEndpoint.class)
                .withPropertyValues("fencing.admin.enabled=true");
        own.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Spring Security is not on the class path");
        });
        own.withPropertyValues("fencing.admin.allow-unsecured=true").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(FencingAdminWebExtension.class));
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnEndpoint {
        @org.springframework.context.annotation.Bean
        dev.fencing.boot.actuate.FencingEndpoint fencingEndpoint(FenceStore store, MeterRegistry registry) {
            return new dev.fencing.boot.actuate.FencingEndpoint(store, null, java.time.Duration.ofSeconds(10),
                    registry);
        }
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void adminAskedForAndNotServedIsAWarningNamingWhy(CapturedOutput output) {
        String unserved = "the admin operations (the mode switch, the reset, the floor raise) are not served";
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FencingAdminWebExtension.class));
        assertThat(output.getAll()).doesNotContain(unserved);
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true",
                "management.endpoints.web.exposure.include=health").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(FencingAdminWebExtension.class));
        assertThat(output.getAll()).contains("fencing.admin.enabled=true, but the fencing endpoint is not available",
                unserved);
        int before = output.getAll().length();
        runner.withPropertyValues("fencing.admin.enabled=true")
                .withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(
                        org.springframework.boot.actuate.endpoint.annotation.Endpoint.class))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll().substring(before)).contains("Spring Boot's actuator is not on the class path",
                unserved);
        before = output.getAll().length();
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true",
                "management.server.port=-1").run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll().substring(before)).contains("management.server.port=-1 turns the actuator's web "
                + "endpoints off", unserved);
        before = output.getAll().length();
        runner.withPropertyValues("fencing.admin.enabled=false", "management.endpoints.web.exposure.include=health")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll().substring(before)).doesNotContain(unserved);
    }

    /**
     * Behind a routing store (two databases), each resource is administered in its route's store: the floor raise
     * after a restore and the reset of one resource work (startup failed with "offers no administration").
     */
    @Test
    @SuppressWarnings("unchecked")
    void behindARoutingStoreEachResourceIsAdministeredInItsRoutesStore() {
        dev.fencing.store.InMemoryFenceStore accounts = new dev.fencing.store.InMemoryFenceStore();
        dev.fencing.store.InMemoryFenceStore ledger = new dev.fencing.store.InMemoryFenceStore();
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                .withBean("fenceStore", FenceStore.class, () -> dev.fencing.store.RoutingFenceStore.builder()
                        .route("accounts", accounts).route("ledger", ledger).build())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    accounts.fence("accounts:1", new FencingToken("accounts:1", 4, "a"), () -> null);
                    ledger.fence("ledger:1", new FencingToken("ledger:1", 9, "b"), () -> null);
                    FencingAdminWebExtension admin = context.getBean(FencingAdminWebExtension.class);
                    var bent = admin.write(null, null, "yes", "30", null);
                    assertThat(bent.getStatus()).isEqualTo(400);
                    assertThat(bent.getBody().get("error").toString())
                            .contains("\"afterRestore\" of POST /actuator/fencing must be true or false, not 'yes'");
                    var notANumber = admin.write(null, null, "true", "3e2", null);
                    assertThat(notANumber.getStatus()).isEqualTo(400);
                    assertThat(notANumber.getBody().get("error").toString()).contains("\"atLeast\"", "'3e2'");
                    assertThat(accounts.maxSeen("accounts:1")).hasValue(4);
                    var raised = admin.write(null, null, "true", "30", null);
                    assertThat(raised.getStatus()).isEqualTo(200);
                    // the two keys, their families' floors, and the application's own unkeyed resource (ledger)
                    assertThat(raised.getBody()).containsEntry("examined", 5L).containsEntry("raised", 5L);
                    assertThat(accounts.maxSeen("accounts:1")).hasValue(30);
                    assertThat(ledger.maxSeen("ledger:1")).hasValue(30);
                    assertThat(accounts.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("accounts")))
                            .hasValue(30);
                    assertThat(ledger.maxSeen("ledger")).hasValue(30);
                    assertThat(admin.resetFloor("ledger:1", "12", "true", null, null, null, null, null).getStatus())
                            .isEqualTo(200);
                    assertThat(ledger.maxSeen("ledger:1")).hasValue(12);
                });
    }

    /** A repository fenced per key. */
    public static class Orders {
        @dev.fencing.annotation.Fenced(resource = "orders", key = "#id")
        public void save(long id) {
        }
    }

    /**
     * The floor raise covers the application's own fence points that the restored table lacks: a family fenced per
     * key gets a floor, so a key created after the backup refuses its zombie; an unkeyed resource gets a row. A trial
     * restored a table without {@code haacc:102} and saw its zombie's token accepted after the raise.
     */
    @Test
    void theFloorRaiseCoversTheApplicationsFencePointsTheRestoredTableLacks() {
        runner.withBean(Orders.class)
                .withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    var store = (dev.fencing.store.InMemoryFenceStore) context.getBean(FenceStore.class);
                    var raised = context.getBean(FencingAdminWebExtension.class).raiseFloors(true, 40L, null);
                    assertThat(raised.getStatus()).isEqualTo(200);
                    assertThat(raised.getBody()).containsEntry("examined", 2L).containsEntry("raised", 2L);
                    assertThat(store.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("orders"))).hasValue(40);
                    assertThat(store.maxSeen("ledger")).hasValue(40);
                    assertThat(store.maxSeen("orders")).as("no row for the family's own name").isEmpty();
                    org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.fence("orders:7",
                            new FencingToken("orders:7", 39, "zombie"), () -> null))
                            .isInstanceOf(dev.fencing.rule.TokenRejectedException.class);
                });
    }

    @Test
    void aStoreWithoutAdministrationFailsStartupNamingIt() {
        runner.withPropertyValues("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                .withBean("customStore", FenceStore.class, () -> new FenceStore() {
                    @Override
                    public <T> T fence(String resource, FencingToken token, dev.fencing.store.FencedCall<T> write)
                            throws Throwable {
                        return write.proceed();
                    }
                })
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("fencing.admin.enabled=true", "fencing.admin.allow-unsecured=true")
                        .hasStackTraceContaining("offers no administration"));
    }
}
