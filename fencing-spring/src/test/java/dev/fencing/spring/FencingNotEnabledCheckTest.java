package dev.fencing.spring;

import dev.fencing.testsupport.LogRecords;
import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.support.FencingNotEnabledCheck;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Spring Boot application (which applies the initializers of {@code spring.factories}) with {@code @Fenced} beans
 * and no fencing enabled fails at startup, naming a method and the fix, before any lifecycle bean starts.
 */
class FencingNotEnabledCheckTest {

    @Configuration
    static class Unfenced {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }
    }

    @Configuration
    @EnableFencing
    static class Fenced {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    private static StandardEnvironment environment(Map<String, Object> properties) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
        return environment;
    }

    private static AnnotationConfigApplicationContext context(Class<?> config, StandardEnvironment environment) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.setEnvironment(environment);
        new FencingNotEnabledCheck().initialize(context);
        context.register(config);
        return context;
    }

    @Test
    void fencedBeansWithoutFencingFailStartupNamingTheMethodAndTheStarter() {
        AnnotationConfigApplicationContext context = context(Unfenced.class, environment(Map.of()));
        assertThatThrownBy(context::refresh).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Fixtures$Ledger")
                .hasMessageContaining("dev.fencing:fencing-spring-boot-starter")
                .hasMessageContaining("@EnableFencing");
        assertThat(context.isActive()).isFalse();
    }

    @Test
    void withFencingEnabledOrSwitchedOffOnPurposeItStarts() {
        try (AnnotationConfigApplicationContext context = context(Fenced.class, environment(Map.of()))) {
            context.refresh();
        }
        try (AnnotationConfigApplicationContext context = context(Unfenced.class,
                environment(Map.of("fencing.enabled", "false")))) {
            context.refresh();
        }
    }

    @Configuration
    static class MockedLedger {
        @Bean
        Fixtures.Ledger ledger() {
            return Mockito.mock(Fixtures.Ledger.class);
        }
    }

    @Configuration
    static class SpiedLedger {
        @Bean
        Fixtures.Ledger ledger() {
            return Mockito.spy(new Fixtures.Ledger());
        }
    }

    /** A test's {@code @MockitoBean} of a fenced bean runs none of its code: no failure (a web test slice's case). */
    @Test
    void aMockOfAFencedBeanIsNoWriteToFenceButASpyIs() {
        try (AnnotationConfigApplicationContext context = context(MockedLedger.class, environment(Map.of()))) {
            context.refresh();
        }
        AnnotationConfigApplicationContext spied = context(SpiedLedger.class, environment(Map.of()));
        assertThatThrownBy(spied::refresh).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Fixtures$Ledger");
    }

    /**
     * {@code fencing.enabled=false} where the starter's warning does not run (a plain context here, a Boot test slice
     * without fencing's auto-configuration there): the check says that the fenced methods run unchecked.
     */
    @Test
    void switchedOffWithoutTheStartersWarningItWarnsNamingAMethod() {
        try (LogRecords log = LogRecords.of(FencingNotEnabledCheck.class.getName());
             AnnotationConfigApplicationContext context = context(Unfenced.class,
                     environment(Map.of("fencing.enabled", "false")))) {
            context.refresh();
            assertThat(log.records()).singleElement().satisfies(record -> {
                assertThat(record.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(record.getMessage()).contains("fencing.enabled=false: every @Fenced method runs unchecked")
                        .contains("Fixtures$Ledger");
            });
        }
        try (LogRecords log = LogRecords.of(FencingNotEnabledCheck.class.getName());
             AnnotationConfigApplicationContext context = context(MockedLedger.class,
                     environment(Map.of("fencing.enabled", "false")))) {
            context.refresh();
            assertThat(log.records()).isEmpty(); // nothing fenced but a mock: nothing runs unchecked
        }
    }

    /** {@code yes} or {@code on} turns the starter neither on nor off: a startup failure naming the value. */
    @Test
    void aSwitchThatIsNeitherTrueNorFalseFailsNamingIt() {
        for (String value : new String[] {"yes", "on", "1", "true "}) { // the starter's conditions do not trim
            AnnotationConfigApplicationContext context = context(Fenced.class,
                    environment(Map.of("fencing.enabled", value)));
            assertThatThrownBy(context::refresh).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.enabled is '" + value + "', which is neither true nor false");
        }
        try (AnnotationConfigApplicationContext context = context(Fenced.class,
                environment(Map.of("fencing.enabled", "TRUE")))) {
            context.refresh();
        }
    }

    /** Stands for a message listener container that consumes a queue's backlog as soon as it is started. */
    static final class BacklogConsumer implements SmartLifecycle {
        private final Fixtures.Ledger ledger;
        private volatile boolean running;

        BacklogConsumer(Fixtures.Ledger ledger) {
            this.ledger = ledger;
        }

        @Override
        public void start() {
            running = true;
            ledger.append("message from the backlog, written with no token");
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

    @Configuration
    static class UnfencedWithConsumer {
        static final Fixtures.Ledger LEDGER = new Fixtures.Ledger();

        @Bean
        Fixtures.Ledger ledger() {
            return LEDGER;
        }

        @Bean
        BacklogConsumer consumer(Fixtures.Ledger ledger) {
            return new BacklogConsumer(ledger);
        }
    }

    /**
     * The failure comes once every singleton exists, before any lifecycle bean starts: a listener container (Rabbit,
     * Kafka, JMS), a scheduler or the embedded web server takes no work first. On the refresh event, which Spring
     * publishes after starting them, a listener container with a backlog wrote through the unfenced ledger.
     */
    @Test
    void noFencedWriteRunsBeforeTheStartupFailure() {
        AnnotationConfigApplicationContext context = context(UnfencedWithConsumer.class, environment(Map.of()));
        assertThatThrownBy(context::refresh).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("fencing is not enabled");
        assertThat(UnfencedWithConsumer.LEDGER.entries).as("writes made unchecked before startup failed").isEmpty();
    }

    /**
     * It listens to no event: a listener whose event type the multicaster cannot read (a lambda) would be called with
     * every event of the application, a web request's {@code ServletRequestHandledEvent} included.
     */
    @Test
    void itAddsNoApplicationListener() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        Set<ApplicationListener<?>> before = new HashSet<>(context.getApplicationListeners());
        new FencingNotEnabledCheck().initialize(context);
        assertThat(context.getApplicationListeners()).containsExactlyInAnyOrderElementsOf(before);
    }

    @Test
    void springBootFindsItInSpringFactories() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationContextInitializer.class))
                .anyMatch(FencingNotEnabledCheck.class::isInstance);
    }
}
