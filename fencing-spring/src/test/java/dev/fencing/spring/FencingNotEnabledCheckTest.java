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
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.context.event.GenericApplicationListenerAdapter;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Spring Boot application (which applies the initializers of {@code spring.factories}) with {@code @Fenced} beans
 * and no fencing enabled fails at startup, naming a method and the fix.
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

    @Test
    void itsListenerTakesRefreshEventsOnlyNotEveryEventOfTheApplication() {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        Set<ApplicationListener<?>> before = new HashSet<>(context.getApplicationListeners());
        new FencingNotEnabledCheck().initialize(context);
        List<ApplicationListener<?>> added = context.getApplicationListeners().stream()
                .filter(listener -> !before.contains(listener)).toList();
        assertThat(added).hasSize(1);
        // what the event multicaster asks before calling a listener: a listener whose event type it cannot read
        // (a lambda) is called with every event, a web request's ServletRequestHandledEvent included
        GenericApplicationListenerAdapter adapter = new GenericApplicationListenerAdapter(added.get(0));
        assertThat(adapter.supportsEventType(ResolvableType.forClass(ContextRefreshedEvent.class))).isTrue();
        assertThat(adapter.supportsEventType(ResolvableType.forClass(PayloadApplicationEvent.class))).isFalse();
        assertThat(adapter.supportsEventType(ResolvableType.forClass(ContextClosedEvent.class))).isFalse();
    }

    @Test
    void springBootFindsItInSpringFactories() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationContextInitializer.class))
                .anyMatch(FencingNotEnabledCheck.class::isInstance);
    }
}
