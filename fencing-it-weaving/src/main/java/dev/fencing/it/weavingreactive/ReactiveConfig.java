package dev.fencing.it.weavingreactive;

import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.spring.EnableFencing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An ASPECTJ context with a reactive store and a woven reactive bean. In a package of its own: the startup check of a
 * context without a reactive store fails for a reactive fenced class under its packages.
 */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
public class ReactiveConfig {
    @Bean
    InMemoryReactiveFenceStore reactiveFenceStore() {
        return new InMemoryReactiveFenceStore();
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    WovenReactiveLedger reactiveLedger() {
        return new WovenReactiveLedger();
    }
}
