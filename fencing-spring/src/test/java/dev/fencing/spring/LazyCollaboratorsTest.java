package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @EnableFencing} must not create the application's store, issuer or meter registry while bean
 * post-processors are being registered (the infrastructure auto-proxy creator pulls the fence advisor then): such
 * beans would miss every later post-processor, as Spring Boot's meter registry customization and the metrics
 * binding of connection pools. They are resolved on first use, and at the latest once every singleton exists.
 */
class LazyCollaboratorsTest {

    /** What the ObservationRegistry bean's handler saw stop: name and outcome. */
    static final List<String> OBSERVED = new CopyOnWriteArrayList<>();

    /** An ordinary (unordered) post-processor, registered after the auto-proxy creator: records what it saw. */
    static final class Recorder implements BeanPostProcessor {
        final Set<String> seen = ConcurrentHashMap.newKeySet();

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            seen.add(beanName);
            return bean;
        }
    }

    @Configuration
    @EnableFencing
    static class Config {
        @Bean
        static Recorder recorder() {
            return new Recorder();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        ObservationRegistry observationRegistry() {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new ObservationHandler<>() {
                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }

                @Override
                public void onStop(Observation.Context context) {
                    OBSERVED.add(context.getName() + " " + context.getLowCardinalityKeyValue("outcome").getValue());
                }
            });
            return registry;
        }

        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        Fixtures.Bookkeeper bookkeeper(Fixtures.Ledger ledger) {
            return new Fixtures.Bookkeeper(ledger);
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class AcquireWithoutIssuer {
        @Bean
        Fixtures.Bookkeeper bookkeeper() {
            return new Fixtures.Bookkeeper(new Fixtures.Ledger());
        }
    }

    @Test
    void storeIssuerAndMeterRegistryGetEveryPostProcessor() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            assertThat(ctx.getBean(Recorder.class).seen).contains("fenceStore", "tokenIssuer", "meterRegistry",
                    "observationRegistry");
            OBSERVED.clear();
            // and they are the ones in use
            FencingToken token = ctx.getBean(Fixtures.Bookkeeper.class).book("a");
            assertThat(OBSERVED).as("each check observed in the ObservationRegistry bean").contains(
                    "fencing.check accepted");
            assertThat(ctx.getBean(InMemoryFenceStore.class).maxSeen("ledger")).hasValue(token.value());
            assertThat(ctx.getBean(MeterRegistry.class).get("fencing.checks").tag("resource", "ledger")
                    .tag("outcome", "accepted").counter().count()).isEqualTo(1);
        }
    }

    @Test
    void anAcquiringMethodWithoutAnIssuerStillFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(AcquireWithoutIssuer.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Bookkeeper.book(String)").hasMessageContaining("TokenIssuer");
    }

    @Test
    void aFencedCallBeforeStartupChecksResolvesTheCollaborators() {
        try (var ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(Config.class);
            ctx.registerBean("early", Object.class, () -> {
                // a singleton that writes during its own creation, before the startup checks ran
                FencingContext.run(new FencingToken("ledger", 5, "h"), () ->
                        ctx.getBean(Fixtures.Ledger.class).append("early"));
                return new Object();
            });
            ctx.refresh();
            assertThat(ctx.getBean(Fixtures.Ledger.class)).hasToString("Ledger[early]");
            assertThat(ctx.getBean(InMemoryFenceStore.class).maxSeen("ledger")).hasValue(5);
        }
    }
}
