package dev.fencing.spring;

import dev.fencing.testsupport.LogRecords;
import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * No silent in-memory fallback: a context without a {@code FenceStore} bean fails to start and shows the bean to add,
 * unless the application chose the in-memory store itself; the store is verified once the context is complete.
 */
class FenceStoreStartupTest {

    /** A fenced bean; each configuration below adds its own {@code @EnableFencing}. */
    static class LedgerBean {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }
    }

    @Configuration
    @EnableFencing
    static class NoStore extends LedgerBean {
    }

    @Configuration
    @EnableFencing
    static class NoStoreNoFencedBean {
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class InMemoryAllowed extends LedgerBean {
    }

    @Configuration
    @EnableFencing
    static class InMemoryBean extends LedgerBean {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    /** Records verify() calls and what existed then; refuses when told to. */
    static final class VerifiedStore implements FenceStore {
        final InMemoryFenceStore delegate = new InMemoryFenceStore();
        final List<String> verified = new CopyOnWriteArrayList<>();
        final List<String> events;
        volatile String refusal;

        VerifiedStore(List<String> events) {
            this.events = events;
        }

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return delegate.fence(resource, token, write);
        }

        @Override
        public void verify() {
            events.add("verify");
            if (refusal != null) {
                throw new FencingConfigurationException(refusal);
            }
        }
    }

    static final List<String> EVENTS = new CopyOnWriteArrayList<>();
    static volatile String refusal;

    /** Stands for the application's database initialization (schema.sql, Flyway): a bean created late. */
    static final class SchemaInitializer implements InitializingBean {
        @Override
        public void afterPropertiesSet() {
            EVENTS.add("schema");
        }
    }

    @Configuration
    @EnableFencing
    static class Verified extends LedgerBean {
        @Bean
        VerifiedStore fenceStore() {
            VerifiedStore store = new VerifiedStore(EVENTS);
            store.refusal = refusal;
            return store;
        }

        @Bean
        SchemaInitializer schemaInitializer() {
            return new SchemaInitializer();
        }
    }

    @Test
    void noStoreBeanFailsStartupShowingTheJdbcStoreToAdd() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoStore.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("found no FenceStore bean")
                .hasMessageContaining("JdbcFenceStore fenceStore(DataSource dataSource, "
                        + "PlatformTransactionManager transactionManager)")
                .hasMessageContaining(
                        "JdbcFenceStore.builder(dataSource).transactionManager(transactionManager).build()")
                .hasMessageContaining("InMemoryFenceStore bean")
                .hasMessageContaining("@EnableFencing(allowInMemoryStore = true)");
    }

    @Configuration
    @EnableFencing
    static class RoutedLedgerOnly extends LedgerBean {
        @Bean
        RoutingFenceStore fenceStore() {
            return RoutingFenceStore.builder().route("ledger", new InMemoryFenceStore()).build();
        }
    }

    @Configuration
    @EnableFencing
    static class RoutedSomeShipments extends LedgerBean {
        @Bean
        RoutingFenceStore fenceStore() {
            return RoutingFenceStore.builder().route("ledger", new InMemoryFenceStore())
                    .route("shipments:eu", new InMemoryFenceStore()).build();
        }
    }

    /**
     * A routing store with no route (and no fallback) for a resource a {@code @Fenced} method checks fails startup,
     * naming the method and the routes, instead of starting and answering every call of that method as a store
     * failure (503), as a new user's trial with two databases saw.
     */
    @Test
    void aResourceNoRouteCoversFailsStartupNamingTheMethod() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(RoutedLedgerOnly.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Ledger.ship(Shipment)")
                .hasMessageContaining("checks resource 'shipments', which the fence store does not guard")
                .hasMessageContaining("routes: [ledger]");
        try (var ctx = new AnnotationConfigApplicationContext(RoutedSomeShipments.class)) {
            assertThat(ctx.getBean(Fixtures.Ledger.class)).as("a route of some of its keys is enough").isNotNull();
        }
    }

    @Test
    void noStoreBeanFailsStartupEvenWithoutAFencedBean() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoStoreNoFencedBean.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("found no FenceStore bean");
    }

    @Test
    void allowInMemoryStoreUsesAnInMemoryStoreAndWarns() {
        List<java.util.logging.LogRecord> records;
        try (LogRecords log = LogRecords.of("dev.fencing.spring.support.FencingSupportConfiguration");
             var ctx = new AnnotationConfigApplicationContext(InMemoryAllowed.class)) {
            assertFenced(ctx);
            assertThat(ctx.getBeansOfType(FenceStore.class)).isEmpty();
            records = log.records();
        }
        assertThat(records).singleElement().satisfies(logRecord -> {
            assertThat(logRecord.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
            assertThat(logRecord.getMessage()).contains("allowInMemoryStore = true").contains("inside this JVM only");
        });
    }

    @Test
    void anExplicitInMemoryStoreBeanIsEnough() {
        try (var ctx = new AnnotationConfigApplicationContext(InMemoryBean.class)) {
            assertFenced(ctx);
            assertThat(ctx.getBean(InMemoryFenceStore.class).maxSeen("ledger")).hasValue(2);
        }
    }

    @Test
    void theStoreIsVerifiedOnceAfterEverySingletonExists() {
        EVENTS.clear();
        refusal = null;
        try (var ctx = new AnnotationConfigApplicationContext(Verified.class)) {
            assertFenced(ctx);
            assertThat(EVENTS).containsExactly("schema", "verify");
        }
    }

    @Test
    void aStoreThatFailsVerificationFailsStartup() {
        EVENTS.clear();
        refusal = "Fence table 'fence_tokens' is missing; create it with ...";
        try {
            assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Verified.class).close())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Fence table 'fence_tokens' is missing");
        } finally {
            refusal = null;
        }
    }

    private static void assertFenced(AnnotationConfigApplicationContext ctx) {
        Fixtures.Ledger ledger = ctx.getBean(Fixtures.Ledger.class);
        FencingContext.run(new FencingToken("ledger", 2, "h"), () -> ledger.append("a"));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("ledger", 1, "h"), () -> ledger.append("b")))
                .isInstanceOf(StaleTokenException.class);
    }
}
