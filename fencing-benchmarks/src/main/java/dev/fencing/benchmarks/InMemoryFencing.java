package dev.fencing.benchmarks;

import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The application the per-call benchmarks fence through: {@code @EnableFencing} on CGLIB proxies, the in-memory
 * store, counters on a {@link SimpleMeterRegistry}, and one {@link Target} bean.
 */
@Configuration(proxyBeanMethods = false)
@EnableFencing(proxyTargetClass = true)
class InMemoryFencing {

    @Bean
    InMemoryFenceStore fenceStore() {
        return new InMemoryFenceStore();
    }

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    Target target() {
        return new Target();
    }
}
